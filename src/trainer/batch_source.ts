/**
 * Where the Trainer's batches come from, one per train step: the sample strategy over the
 * experience buffers (`sample_source.ts`), demonstrations or preference pairs of a dataset, or
 * a stored buffer. The Trainer's loop is the same for every source; a source does no training.
 */

import type { SampleOptions } from "../algorithm/sample_strategy.ts";
import type { Experience } from "../buffer/experience.ts";

/** One train step's batch. */
export interface Batch {
  batch: Experience[];
  /** Dataset rows skipped while reading it (absent for sources that skip none). */
  skipped?: number;
  /** Per experience: whether it is expert data (`mix`). */
  isExpert?: boolean[];
  /** The source's metrics of this batch (e.g. the sample strategy's), for the step's row. */
  metrics?: Record<string, number>;
}

/** A source of training batches. */
export interface BatchSource {
  /**
   * The next batch of about `size` rows, or null when the source is exhausted. An empty batch
   * is a step without a learning signal (the weights stay as they are).
   */
  next(size: number, options: SampleOptions): Promise<Batch | null>;
  /** The state to save in a checkpoint (null when the source keeps its own). */
  cursor(): unknown;
  /** Counters for each step's row (e.g. the buffer's), taken after the step. */
  metrics?(): Record<string, number>;
  close(): Promise<void>;
}
