/**
 * A run's metrics as one self-contained HTML page: inline SVG line charts per metric group
 * (reward, eval accuracy per taskset, loss, KL, entropy, response length, tokens/s, an agent's
 * per-episode turns, tool calls and trained vs masked tokens, and task selection: pass rate per
 * taskset, the drawn tasks' difficulty, tasksets graduated) and a table
 * of the last row. No JavaScript, no network; metrics the page does not know only show in it.
 */

import { writeAtomic } from "../util/write_atomic.ts";
import { formatMetric } from "./console_progress.ts";
import {
  EPISODE_METRICS,
  EPISODE_TOKEN_METRICS,
  EVAL_ACCURACY,
  METRIC,
  TASK_METRIC,
} from "./metric_keys.ts";
import { METRICS_FILE, type MetricsRow, readMetrics } from "./metrics_log.ts";
import { escapeHtml, renderLineChart, type Series } from "./svg_chart.ts";

/**
 * The charts, in page order, as [title, keys]: listed keys, or a pattern whose matches are found
 * in the rows (each labelled by its capture).
 */
const CHARTS: readonly (readonly [string, readonly string[] | RegExp])[] = [
  ["Reward (mean)", [METRIC.reward]],
  ["Eval accuracy", EVAL_ACCURACY],
  ["Actor loss", [METRIC.loss]],
  ["KL", [METRIC.kl]],
  ["Entropy", [METRIC.entropy]],
  ["Response length (mean tokens)", [METRIC.responseLength]],
  ["Tokens/s", [METRIC.tokensPerSecond]],
  ["Agent episodes (mean per episode)", EPISODE_METRICS],
  ["Episode tokens: trained vs masked", EPISODE_TOKEN_METRICS],
  ["Task pass rate", TASK_METRIC.passRate],
  ["Selected tasks", TASK_METRIC.selected],
  ["Tasksets graduated", TASK_METRIC.graduated],
];

const STYLE = `body{font:14px system-ui,sans-serif;margin:24px;color:#222}
.charts{display:flex;flex-wrap:wrap;gap:16px}
figure{margin:0;border:1px solid #ddd;border-radius:4px;padding:8px}
figcaption{font-weight:600;margin-bottom:4px}
.grid{stroke:#eee}.axis{stroke:#888;fill:none}.tick{font-size:11px;fill:#555}
.series{fill:none;stroke-width:1.5}
.legend span{margin-right:12px}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
table{border-collapse:collapse;margin-top:16px}td,th{padding:2px 12px;text-align:left}
td:last-child{text-align:right;font-variant-numeric:tabular-nums}tr:nth-child(even){background:#f6f6f6}`;

/** The page for `rows` (any order), titled `title`; `unreadable` lines are mentioned. */
export function renderPlotHtml(rows: readonly MetricsRow[], title: string, unreadable = 0): string {
  const sorted = [...rows].sort((a, b) => a.step - b.step);
  const keys = [...new Set(sorted.flatMap((row) => Object.keys(row)))].sort();
  const charts = CHARTS.map(([chartTitle, chartKeys]) => {
    const labelled = Array.isArray(chartKeys)
      ? chartKeys.map((key) => [key, key])
      : keys.flatMap((key) => {
        const label = (chartKeys as RegExp).exec(key)?.[1];
        return label === undefined ? [] : [[key, label]];
      });
    const series = labelled.map(([key, label]) => seriesOf(sorted, key, label))
      .filter((s) => s.points.some((p) => p !== null));
    return series.length ? renderLineChart(chartTitle, series) : "";
  }).filter((chart) => chart !== "");
  const last = sorted[sorted.length - 1];
  const note = `${rows.length} rows, steps ${sorted[0].step} to ${last.step}` +
    (unreadable ? `, ${unreadable} unreadable lines skipped` : "");
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>${STYLE}</style></head>
<body>
<h1>${escapeHtml(title)}</h1>
<p>${note}</p>
<div class="charts">
${charts.join("\n")}
</div>
<h2>Last row</h2>
${lastRowTable(last)}
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
  const { rows, unreadable } = await readMetrics(`${runDir}/${METRICS_FILE}`).catch((err) =>
    err instanceof Deno.errors.NotFound ? fail(`it has no ${METRICS_FILE}`) : Promise.reject(err)
  );
  if (rows.length === 0) fail(`${METRICS_FILE} has no readable rows`);
  await writeAtomic(outFile, renderPlotHtml(rows, `rft run ${runDir}`, unreadable));
  return outFile;
}

/** The `key` column of `rows` as points; a missing value is skipped, a null one breaks the line. */
function seriesOf(rows: readonly MetricsRow[], key: string, label: string): Series {
  const points = rows.filter((row) => key in row)
    .map((row) => row[key] === null ? null : [row.step, row[key]] as [number, number]);
  return { label, points };
}

/** The last row as a two-column table: step and time first, then the metrics by name. */
function lastRowTable(row: MetricsRow): string {
  const { step, time, ...metrics } = row;
  const cells: [string, string][] = [
    ["step", String(step)],
    ["time", new Date(time * 1000).toISOString()],
    ...Object.keys(metrics).sort().map((k): [string, string] => {
      const value = metrics[k];
      return [k, value === null ? "null" : formatMetric(value)];
    }),
  ];
  const body = cells.map(([k, v]) => `<tr><td>${escapeHtml(k)}</td><td>${v}</td></tr>`);
  return `<table>\n${body.join("\n")}\n</table>`;
}
