/**
 * A run's monitor: each `log(step, metrics)` appends a row to `<runDir>/metrics.jsonl`, writes
 * the scalars to TensorBoard under `<runDir>/tensorboard/` and prints a console line, each
 * optional but the metrics file. Parts of a step's row produced elsewhere (the explorer's, in a
 * stage whose trainer writes the row) are held until that step is logged, so each step keeps
 * one row. It computes no metrics itself; the run loop hands them in.
 */

import { ProgressPrinter } from "./console_progress.ts";
import { MetricsLog } from "./metrics_log.ts";
import { TensorBoardWriter } from "./tensorboard.ts";

/** What `Monitor.open` writes besides metrics.jsonl, and how a resumed run continues. */
export interface MonitorOptions {
  /** Also write TensorBoard event files under `<runDir>/tensorboard/`. */
  tensorboard: boolean;
  /** Also print a progress line per step to stderr. */
  console: boolean;
  /** The run's last step, for the progress bar and ETA. */
  totalSteps?: number;
  /** A resumed run's last finished step: later rows are dropped from metrics.jsonl. */
  resumeAfterStep?: number;
}

/** Logs a run's metrics to its files and the console. */
export class Monitor {
  readonly #held = new Map<number, Record<string, number>>();
  #stage: string | undefined;

  private constructor(
    private readonly metrics: MetricsLog,
    private readonly tensorboard: TensorBoardWriter | undefined,
    private readonly progress: ProgressPrinter | undefined,
  ) {}

  /** Opens the monitor of the run in `runDir` (created when missing). */
  static async open(runDir: string, options: MonitorOptions): Promise<Monitor> {
    const metrics = await MetricsLog.open(runDir, { truncateAfterStep: options.resumeAfterStep });
    const tensorboard = options.tensorboard
      ? await TensorBoardWriter.open(`${runDir}/tensorboard`)
      : undefined;
    const progress = options.console
      ? new ProgressPrinter(options.totalSteps, options.resumeAfterStep)
      : undefined;
    return new Monitor(metrics, tensorboard, progress);
  }

  /** Names the stage of the rows logged from now on (runs of several stages). */
  beginStage(name: string): void {
    this.#stage = name;
  }

  /** Holds `metrics` of `step` until that step is logged; they go first in its row. */
  hold(step: number, metrics: Record<string, number>): void {
    this.#held.set(step, { ...this.#held.get(step), ...metrics });
  }

  /** Logs the held parts no `log` took, each as its step's row. */
  async logHeld(): Promise<void> {
    for (const [step, metrics] of [...this.#held]) await this.log(step, metrics);
  }

  /** Records `metrics` (flat keys such as `actor/loss`) for `step`, after any held part. */
  async log(step: number, logged: Record<string, number>): Promise<void> {
    const metrics = { ...this.#held.get(step), ...logged };
    this.#held.delete(step);
    const time = Date.now() / 1000;
    await this.metrics.append(step, metrics, time, this.#stage);
    await this.tensorboard?.writeScalars(step, metrics, time);
    this.progress?.print(step, metrics);
  }

  /** Closes the files. */
  close(): void {
    this.metrics.close();
    this.tensorboard?.close();
  }
}
