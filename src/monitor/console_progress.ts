/**
 * The console's progress: per stage `[sft] step 120/700 [=>        ] 17% 45s, ETA 3m40s | loss
 * 1.58 | lr 0.0029 | tok/s 3810`, the numbers a practitioner watches (reward, loss, KL, entropy,
 * learning rate, tokens/s, response length, staleness) when the step has them. On a terminal it
 * is one line redrawn in place (`src/util/status_lines.ts`); in a log file, one line per step.
 * Evaluations are lines of their own that stay. `formatProgressLine` is pure; `ConsoleSink`
 * adds the clock. No colours.
 */

import { endUpdatingLine, printLine, printUpdatingLine } from "../util/status_lines.ts";
import type { MetricsRecord, MetricsSink, StageInfo } from "./metrics_sink.ts";
import { evalAccuracyTaskset, METRIC } from "./metric_keys.ts";

/** The metrics shown, in order, as [label, keys]: the first key the step has is shown. */
const SHOWN: readonly (readonly [string, readonly string[]])[] = [
  ["reward", [METRIC.reward]],
  ["loss", [METRIC.loss]],
  ["kl", [METRIC.kl, "actor/ppo_kl"]],
  ["entropy", [METRIC.entropy]],
  ["lr", ["actor/lr"]],
  ["tok/s", [METRIC.tokensPerSecond, "actor/tokens_per_s"]],
  ["resp_len", [METRIC.responseLength]],
  ["staleness", [METRIC.staleness]],
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

/** Where a stage stands: its name, the step and total, time spent, the pace. */
export interface StageProgress {
  stage?: string;
  step: number;
  total?: number;
  /** Seconds since this process took the stage up. */
  elapsedSeconds: number;
  /** Seconds a step takes of late, for the ETA (unknown before two steps were seen). */
  secondsPerStep?: number;
}

/**
 * The progress line of `progress` with the well-known metrics present and every eval accuracy
 * (`eval <taskset> acc 0.42`). The ETA assumes the remaining steps take `secondsPerStep` each.
 *
 * @example
 * ```ts
 * formatProgressLine(
 *   { stage: "grpo", step: 12, total: 100, elapsedSeconds: 30, secondsPerStep: 2.5 },
 *   { "rollout/reward_mean": 0.42 },
 * );
 * // "[grpo] step 12/100 [=>        ] 12% 30s, ETA 3m40s | reward 0.42"
 * ```
 */
export function formatProgressLine(
  progress: StageProgress,
  metrics: Record<string, number>,
): string {
  const { stage, step, total, elapsedSeconds, secondsPerStep } = progress;
  let head = `${stage ? `[${stage}] ` : ""}step ${step}`;
  if (total !== undefined && total > 0) {
    const fraction = Math.min(1, Math.max(0, step / total));
    const filled = Math.floor(fraction * BAR_WIDTH);
    const bar = filled === BAR_WIDTH
      ? "=".repeat(BAR_WIDTH)
      : "=".repeat(filled) + ">" + " ".repeat(BAR_WIDTH - filled - 1);
    head += `/${total} [${bar}] ${Math.floor(fraction * 100)}% ${formatDuration(elapsedSeconds)}`;
    if (secondsPerStep !== undefined) {
      head += `, ETA ${formatDuration(secondsPerStep * Math.max(0, total - step))}`;
    }
  } else {
    head += ` ${formatDuration(elapsedSeconds)}`;
  }
  const parts = SHOWN.flatMap(([label, keys]) => {
    const key = keys.find((k) => k in metrics);
    return key === undefined ? [] : [`${label} ${formatMetric(metrics[key])}`];
  });
  const evals = Object.keys(metrics).flatMap((key) => {
    const taskset = evalAccuracyTaskset(key);
    return taskset === undefined ? [] : [`eval ${taskset} acc ${formatMetric(metrics[key])}`];
  });
  return [head, ...parts, ...evals].join(" | ");
}

/** Whether a row holds evaluations only (it is printed as a line that stays). */
function evalOnly(metrics: Record<string, number>): boolean {
  const keys = Object.keys(metrics);
  return keys.length > 0 && keys.every((k) => k.startsWith("eval/") || k.startsWith("time/eval"));
}

/**
 * The console monitor: the progress line of each step (see the file comment). The pace of the
 * ETA is measured from the first step this process logged in the stage, so neither a resume's
 * earlier steps nor the first step's compilation count.
 */
export class ConsoleSink implements MetricsSink {
  #stage: StageInfo = { startStep: 0 };
  #started = performance.now();
  #first: { step: number; at: number } | undefined;

  beginStage(stage: StageInfo): void {
    endUpdatingLine();
    this.#stage = stage;
    this.#started = performance.now();
    this.#first = undefined;
  }

  setStageTotal(totalSteps: number): void {
    this.#stage = { ...this.#stage, totalSteps };
  }

  log({ step, metrics }: MetricsRecord): void {
    const now = performance.now();
    const evaluation = evalOnly(metrics);
    if (!evaluation) this.#first ??= { step, at: now };
    const first = this.#first;
    const line = formatProgressLine({
      stage: this.#stage.name,
      step,
      total: this.#stage.totalSteps,
      elapsedSeconds: (now - this.#started) / 1000,
      secondsPerStep: first && step > first.step
        ? (now - first.at) / 1000 / (step - first.step)
        : undefined,
    }, metrics);
    if (evaluation) printLine(line);
    else printUpdatingLine(line);
  }

  endStage(): void {
    endUpdatingLine();
  }

  close(): void {
    endUpdatingLine();
  }
}
