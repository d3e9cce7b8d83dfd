/**
 * The console's one line per step: `step 12/100 [=>        ] 12% ETA 3m20s | reward 0.42 | ...`.
 * `formatProgressLine` is pure; `ProgressPrinter` adds the clock and prints to stderr. No
 * carriage-return redraws (the line must read well in a log file) and no colours.
 */

import { evalAccuracyTaskset, METRIC } from "./metric_keys.ts";

/** The metrics shown, in order, as [label, key]; a metric missing from the step is left out. */
const SHOWN: readonly (readonly [string, string])[] = [
  ["reward", METRIC.reward],
  ["loss", METRIC.loss],
  ["kl", METRIC.kl],
  ["entropy", METRIC.entropy],
  ["resp_len", METRIC.responseLength],
  ["tok/s", METRIC.tokensPerSecond],
  ["staleness", METRIC.staleness],
];

const BAR_WIDTH = 10;

/** A metric value in 3 significant digits (integers from 1000 up): 0.42, 0.031, 18, 1234. */
export function formatMetric(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Math.abs(value) >= 1000) return String(Math.round(value));
  return String(Number(value.toPrecision(3)));
}

/** A duration as `42s`, `3m20s` or `2h05m`. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, "0")}m`;
}

/**
 * The progress line after `step` steps of `total` (undefined: no bar, percent or ETA), with
 * the well-known metrics present and every eval accuracy (`eval <taskset> acc 0.42`).
 * `elapsedSeconds` covers the steps after `startStep` (the step a resumed run started from);
 * the ETA assumes the remaining steps take as long as those.
 *
 * @example
 * ```ts
 * formatProgressLine(12, 100, 30, { "rollout/reward_mean": 0.42 });
 * // "step 12/100 [=>        ] 12% ETA 3m40s | reward 0.42"
 * ```
 */
export function formatProgressLine(
  step: number,
  total: number | undefined,
  elapsedSeconds: number,
  metrics: Record<string, number>,
  startStep = 0,
): string {
  let head = `step ${step}`;
  if (total !== undefined && total > 0) {
    const fraction = Math.min(1, Math.max(0, step / total));
    const filled = Math.floor(fraction * BAR_WIDTH);
    const bar = filled === BAR_WIDTH
      ? "=".repeat(BAR_WIDTH)
      : "=".repeat(filled) + ">" + " ".repeat(BAR_WIDTH - filled - 1);
    head += `/${total} [${bar}] ${Math.floor(fraction * 100)}%`;
    const done = step - startStep;
    if (done > 0) head += ` ETA ${formatDuration((elapsedSeconds / done) * (total - step))}`;
  }
  const parts = SHOWN.filter(([, key]) => key in metrics)
    .map(([label, key]) => `${label} ${formatMetric(metrics[key])}`);
  const evals = Object.keys(metrics).flatMap((key) => {
    const taskset = evalAccuracyTaskset(key);
    return taskset === undefined ? [] : [`eval ${taskset} acc ${formatMetric(metrics[key])}`];
  });
  return [head, ...parts, ...evals].join(" | ");
}

/** Prints one progress line per step to stderr, timing from its construction. */
export class ProgressPrinter {
  readonly #started = performance.now();

  /** `total`: the run's last step, if known; `startStep`: where a resumed run picked up. */
  constructor(readonly total?: number, readonly startStep = 0) {}

  /** Prints the line for `step` with its `metrics`. */
  print(step: number, metrics: Record<string, number>): void {
    const elapsed = (performance.now() - this.#started) / 1000;
    console.error(formatProgressLine(step, this.total, elapsed, metrics, this.startStep));
  }
}
