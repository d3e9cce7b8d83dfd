/**
 * What a stage runs with (the GPU, its directory, the monitor) and what a finished stage leaves.
 * Steps count per stage, as in Trinity: on screen, in metrics.jsonl (each row names its stage)
 * and in checkpoints. Types only: the stage runners fill them.
 */

import type { GpuContext } from "../gpu/device.ts";
import type { Monitor } from "../monitor/monitor.ts";

/** What a stage runs with. */
export interface StageContext {
  gpu: GpuContext;
  /** The stage's directory (checkpoints, experiences, cursor files). */
  stageDir: string;
  monitor: Monitor;
  /** Prints one line of progress or warning. */
  log: (line: string) => void;
  signal: AbortSignal;
  /** The previous stage's final checkpoint: this stage's initial weights. */
  previousCheckpoint?: string;
  /**
   * With `cluster.backend: local` (`local_pair.ts`), the NATS URL of the run's trainer: its own
   * server, started on first use, for the trainer; for the explorer, once the trainer names it
   * (undefined when the trainer finished the stage first).
   */
  localUrl?: () => Promise<string | undefined>;
}

/** What a finished stage leaves. */
export interface StageOutcome {
  /** Steps this stage ran in total (resumed ones included). */
  steps: number;
  /** Its last checkpoint (the next stage starts from it); absent when nothing was trained. */
  finalCheckpoint?: string;
  /** The last evaluation's metrics. */
  lastEval: Record<string, number>;
  /** True when this process had nothing to do in the stage (not recorded as finished). */
  skipped?: boolean;
}
