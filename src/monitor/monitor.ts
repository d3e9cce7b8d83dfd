/**
 * A run's monitor: the monitors it writes to (`monitor_registry.ts`: metrics.jsonl always, plus
 * the console, TensorBoard, W&B, a plugin's), each handed every step's row. Asking for one never
 * drops another, and one that cannot open (W&B without its package or network) says so in a line
 * while the others go on. Parts of a step's row produced elsewhere (the explorer's, in a stage
 * whose trainer writes the row) are held until that step is logged, so each step keeps one row.
 * It computes no metrics itself; the run loop hands them in.
 */

import { printLine } from "../util/status_lines.ts";
import type { MetricsLogOptions } from "./metrics_log.ts";
import type { MetricsSink, StageInfo } from "./metrics_sink.ts";
import { MONITORS } from "./monitor_registry.ts";

/** What `Monitor.open` writes to, and how a resumed run continues. */
export interface MonitorOptions {
  /** Also write TensorBoard event files under `<runDir>/tensorboard/` (monitor `tensorboard`). */
  tensorboard?: boolean;
  /** Also print the progress line (monitor `console`). */
  console?: boolean;
  /** More monitors by name (`wandb`, a plugin's), besides those above and metrics.jsonl. */
  monitors?: readonly string[];
  /** A resumed run's last finished step: later rows are dropped from metrics.jsonl. */
  resumeAfterStep?: number;
  /** The stage that step belongs to (runs of several stages). */
  resumeStage?: string;
  /** Names the run for monitors that name runs (W&B): default the run directory's. */
  project?: string;
  name?: string;
  /** The resolved config, for monitors that record it. */
  config?: unknown;
}

/** The monitor names `options` asks for, metrics.jsonl first, each once. */
export function monitorNames(options: MonitorOptions): string[] {
  return [
    ...new Set([
      "jsonl",
      ...(options.console ? ["console"] : []),
      ...(options.tensorboard ? ["tensorboard"] : []),
      ...(options.monitors ?? []),
    ]),
  ];
}

/** Logs a run's metrics to its monitors. */
export class Monitor {
  readonly #held = new Map<number, Record<string, number>>();
  #stage: string | undefined;

  private constructor(
    private readonly sinks: readonly MetricsSink[],
    /** The monitors writing, by name. */
    readonly names: readonly string[],
  ) {}

  /** Opens the monitors of the run in `runDir` (created when missing). */
  static async open(runDir: string, options: MonitorOptions = {}): Promise<Monitor> {
    const resume: MetricsLogOptions = {
      truncateAfterStep: options.resumeAfterStep,
      truncateStage: options.resumeStage,
    };
    const parts = runDir.split("/").filter((p) => p);
    const ctx = {
      runDir,
      project: options.project ?? parts.at(-2) ?? "rft",
      name: options.name ?? parts.at(-1) ?? "run",
      config: options.config,
      resume,
    };
    const sinks: MetricsSink[] = [];
    const names: string[] = [];
    const wanted = monitorNames(options);
    for (const name of wanted) {
      const opened = await MONITORS.get(name)(ctx);
      if ("sink" in opened) {
        sinks.push(opened.sink);
        names.push(name);
      } else {
        const others = wanted.filter((n) => n !== name).join(", ");
        printLine(`monitor ${name} is off: ${opened.unavailable}; ${others} go on`);
      }
    }
    return new Monitor(sinks, names);
  }

  /** Notes that a stage begins: its rows carry its name, the console shows its progress. */
  async beginStage(stage: StageInfo): Promise<void> {
    this.#stage = stage.name;
    for (const sink of this.sinks) await sink.beginStage?.(stage);
  }

  /**
   * The current stage's last step, once its data says (an epoch of its tasksets may end it
   * before `total_steps`).
   */
  setStageTotal(totalSteps: number): void {
    for (const sink of this.sinks) sink.setStageTotal?.(totalSteps);
  }

  /** Notes that the current stage ended. */
  async endStage(): Promise<void> {
    for (const sink of this.sinks) await sink.endStage?.();
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
    const record = { step, stage: this.#stage, time: Date.now() / 1000, metrics };
    for (const sink of this.sinks) await sink.log(record);
  }

  /** Closes every monitor. */
  async close(): Promise<void> {
    for (const sink of this.sinks) await sink.close();
  }
}
