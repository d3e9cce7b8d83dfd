/**
 * A run's metric rows split by stage, in the order the stages ran (the order of their first rows
 * in metrics.jsonl), each stage's rows by step. Rows without a stage (a one-stage run, an older
 * run) form one stage named "". Steps count per stage, so the stages are plotted side by side,
 * never on one step axis.
 */

import type { MetricsRow } from "./metrics_log.ts";

/** The rows of one stage and its step range. */
export interface StageRows {
  name: string;
  rows: MetricsRow[];
  /** First and last step of its rows. */
  first: number;
  last: number;
}

/** `rows` (in file order) by their `stages` (same index), see the file comment. */
export function splitStages(
  rows: readonly MetricsRow[],
  stages: readonly (string | undefined)[] = [],
): StageRows[] {
  const byName = new Map<string, MetricsRow[]>();
  for (const [i, row] of rows.entries()) {
    const name = stages[i] ?? "";
    if (!byName.has(name)) byName.set(name, []);
    byName.get(name)!.push(row);
  }
  return [...byName].map(([name, stageRows]) => {
    const sorted = stageRows.map((row, i) => ({ row, i }))
      .sort((a, b) => a.row.step - b.row.step || a.i - b.i).map(({ row }) => row);
    return { name, rows: sorted, first: sorted[0].step, last: sorted[sorted.length - 1].step };
  });
}
