/**
 * Where a run's metrics go: one sink per monitor (metrics.jsonl, the console, TensorBoard, W&B,
 * a plugin's), each told when a stage begins and handed every step's row. The run's `Monitor`
 * holds the sinks; `monitor_registry.ts` names the kinds.
 */

/** A stage as the sinks learn of it. */
export interface StageInfo {
  /** The stage's name (absent for a run of one stage). */
  name?: string;
  /** Its last step, when known (for `step N/total` and the ETA). */
  totalSteps?: number;
  /** The last step already done when this process took the stage up (0, or where it resumed). */
  startStep: number;
}

/** One logged row. */
export interface MetricsRecord {
  step: number;
  /** The stage the row belongs to, when the run names stages. */
  stage?: string;
  /** Unix seconds. */
  time: number;
  metrics: Record<string, number>;
}

/** A destination of metric rows. */
export interface MetricsSink {
  /** Notes that `stage` begins; later rows belong to it. */
  beginStage?(stage: StageInfo): void | Promise<void>;
  /** The current stage's last step, once known better than at its start. */
  setStageTotal?(totalSteps: number): void;
  /** Records one row. */
  log(record: MetricsRecord): void | Promise<void>;
  /** Ends the current stage (its last progress line stays on screen). */
  endStage?(): void | Promise<void>;
  /** Flushes and closes. */
  close(): void | Promise<void>;
}
