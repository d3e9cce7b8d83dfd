/**
 * A run's metrics as one self-contained HTML page (no network, one inline script): the charts of
 * `plot_panels.ts` for the metrics the run has, each over the run's stages side by side
 * (`svg_chart.ts`), values on hover (`plot_script.ts`), and a table of every metric's last value
 * per stage (metrics no chart draws show there).
 */

import { writeAtomic } from "../util/write_atomic.ts";
import { formatMetric } from "./console_progress.ts";
import { METRICS_FILE, type MetricsRow, readMetrics, rowMetrics } from "./metrics_log.ts";
import { seriesColor } from "./palette.ts";
import { type BandKeys, PANELS, panelSeries, type PanelSpec } from "./plot_panels.ts";
import { PLOT_SCRIPT } from "./plot_script.ts";
import { splitStages, type StageRows } from "./stage_rows.ts";
import { type ChartSeries, escapeHtml, renderChart, type StagePoints } from "./svg_chart.ts";

const STYLE = `body{font:14px system-ui,sans-serif;margin:24px;color:#222;max-width:1000px}
figure{margin:0 0 18px;border:1px solid #ddd;border-radius:4px;padding:8px;position:relative}
figcaption{font-weight:600;margin-bottom:4px}
svg{width:100%;height:auto;display:block}
.grid{stroke:#eee}.axis{stroke:#888;fill:none}.tick{font-size:11px;fill:#555}
.series{fill:none;stroke-width:1.6}.band{opacity:.18;stroke:none}
.stage-boundary{stroke:#555;stroke-dasharray:4 3}.stage-label{font-size:12px;font-weight:600;fill:#333}
.cursor{stroke:#999;stroke-width:1}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px}
.tip{display:none;position:absolute;background:#fff;border:1px solid #bbb;border-radius:3px;
padding:4px 6px;font-size:12px;white-space:pre;pointer-events:none;box-shadow:0 1px 4px #0002}
table{border-collapse:collapse;margin-top:16px}td,th{padding:2px 12px;text-align:left}
td+td,th+th{text-align:right;font-variant-numeric:tabular-nums}tr:nth-child(even){background:#f6f6f6}`;

/** The points of `key` in a stage's rows; a missing value is skipped, a null one breaks. */
function seriesPoints(rows: readonly MetricsRow[], key: string): StagePoints {
  return rows.filter((row) => key in row).map((row) => {
    const value = row[key];
    return typeof value === "number" ? [row.step, value] as [number, number] : null;
  });
}

/**
 * The [step, mean - std, mean + std] of a stage's rows that have both, within the row's min and
 * max when it has them.
 */
function bandPoints(rows: readonly MetricsRow[], keys: BandKeys) {
  return rows.flatMap((row) => {
    const [m, s] = [row[keys.mean], row[keys.std]];
    if (typeof m !== "number" || typeof s !== "number") return [];
    const lo = keys.min === undefined ? null : row[keys.min];
    const hi = keys.max === undefined ? null : row[keys.max];
    const low = typeof lo === "number" ? Math.max(lo, m - s) : m - s;
    const high = typeof hi === "number" ? Math.min(hi, m + s) : m + s;
    return [[row.step, low, high] as [number, number, number]];
  });
}

/** The chart of `panel` over `stages`, or "" when the run has nothing for it to draw. */
function panelChart(panel: PanelSpec, stages: readonly StageRows[], keys: string[]): string {
  const numbers = (key: string) =>
    stages.flatMap((s) => s.rows.map((r) => r[key]).filter((v) => typeof v === "number"));
  const found = panelSeries(panel, keys)
    .map(([key, label]) => ({ key, label, values: numbers(key) as number[] }))
    .filter((s) => s.values.length > 0);
  if (found.length === 0 || (panel.show && !panel.show(found))) return "";
  const has = (stage: StageRows) =>
    found.some((s) => stage.rows.some((r) => typeof r[s.key] === "number"));
  const drawn = stages.filter(has);
  const series: ChartSeries[] = found.map((s, i) => ({
    key: s.key,
    label: s.label,
    color: seriesColor(i),
    points: drawn.map((stage) => seriesPoints(stage.rows, s.key)),
    band: panel.band?.mean === s.key
      ? drawn.map((stage) => bandPoints(stage.rows, panel.band!))
      : undefined,
  }));
  return renderChart(panel.title, drawn, series);
}

/** The last value of every metric in each stage, one column per stage. */
function lastValuesTable(stages: readonly StageRows[]): string {
  const last = stages.map((stage) => {
    const values = new Map<string, number | null>();
    for (const row of stage.rows) {
      for (const [key, value] of Object.entries(rowMetrics(row))) values.set(key, value);
    }
    return values;
  });
  const keys = [...new Set(last.flatMap((m) => [...m.keys()]))].sort();
  const head = `<tr><th>metric</th>${
    stages.map((s) => `<th>${escapeHtml(s.name || "last")}</th>`).join("")
  }</tr>`;
  const body = keys.map((key) =>
    `<tr><td>${escapeHtml(key)}</td>${
      last.map((m) => {
        const v = m.get(key);
        return `<td>${v === undefined ? "" : v === null ? "null" : formatMetric(v)}</td>`;
      }).join("")
    }</tr>`
  );
  return `<table>\n${head}\n${body.join("\n")}\n</table>`;
}

/**
 * The page for `rows` (in file order) of `rowStages` (the stage of each row, when named), titled
 * `title`; `unreadable` lines are mentioned.
 */
export function renderPlotHtml(
  rows: readonly MetricsRow[],
  title: string,
  { rowStages = [], unreadable = 0 }: {
    rowStages?: readonly (string | undefined)[];
    unreadable?: number;
  } = {},
): string {
  const stages = splitStages(rows, rowStages);
  const keys = [...new Set(rows.flatMap((row) => Object.keys(rowMetrics(row))))];
  const charts = PANELS.map((panel) => panelChart(panel, stages, keys)).filter((c) => c !== "");
  const spans = stages.map((s) =>
    `${s.name ? `stage ${escapeHtml(s.name)}: ` : ""}steps ${s.first} to ${s.last}`
  );
  const note = `${rows.length} rows; ${spans.join("; ")}` +
    (unreadable ? `; ${unreadable} unreadable lines skipped` : "");
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>${STYLE}</style></head>
<body>
<h1>${escapeHtml(title)}</h1>
<p>${note}. Hover a chart for the values at a step.</p>
${charts.join("\n")}
<h2>Last values</h2>
${lastValuesTable(stages)}
<script>${PLOT_SCRIPT}</script>
</body></html>
`;
}

/** Writes the page for the run in `runDir` to `outFile` (default `<runDir>/plot.html`). */
export async function writePlot(runDir: string, outFile = `${runDir}/plot.html`): Promise<string> {
  const fail = (why: string): never => {
    throw new Error(`Cannot plot run "${runDir}": ${why}`);
  };
  const stat = await Deno.stat(runDir).catch(() => fail("the directory does not exist"));
  if (!stat.isDirectory) fail("it is not a directory");
  const { rows, stages, unreadable } = await readMetrics(`${runDir}/${METRICS_FILE}`).catch((
    err,
  ) =>
    err instanceof Deno.errors.NotFound ? fail(`it has no ${METRICS_FILE}`) : Promise.reject(err)
  );
  if (rows.length === 0) fail(`${METRICS_FILE} has no readable rows`);
  await writeAtomic(
    outFile,
    renderPlotHtml(rows, `rft run ${runDir}`, { rowStages: stages, unreadable }),
  );
  return outFile;
}
