/** Plain-text tables for the benchmark reports: columns sized to their widest cell. */

/** A column: its title and the text of its cell in a row. */
export type Column<Row> = readonly [title: string, cell: (row: Row) => string];

/** The rows as a table with a header line, first column left-aligned, the others right. */
export function formatTable<Row>(columns: readonly Column<Row>[], rows: readonly Row[]): string {
  const cells = [columns.map(([title]) => title), ...rows.map((r) => columns.map(([, f]) => f(r)))];
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => line[i].length)));
  return cells.map((line) =>
    line.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(" | ")
  ).join("\n");
}
