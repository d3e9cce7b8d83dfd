/**
 * Where the Trainer's batches come from, one per train step: the sample strategy over the
 * experience buffers (`trainer/sample_source.ts`), demonstrations or preference pairs of a
 * dataset (`dataset_source.ts`), or a stored buffer ({@link storedBufferSource}). The Trainer's
 * loop is the same for every source; a source does no training.
 */

import type { SampleOptions } from "../algorithm/sample_strategy.ts";
import type { Experience } from "./experience.ts";
import { ExperienceBuffer } from "./experience_buffer.ts";

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

/**
 * Batches from the persistent experience buffer in `dir` (what an `explore` run wrote), each
 * experience used once; the buffer's record of what was used is kept as it is.
 */
export async function storedBufferSource(dir: string): Promise<BatchSource> {
  const buffer = await ExperienceBuffer.open(dir, { capacity: Number.MAX_SAFE_INTEGER });
  await buffer.close();
  return {
    async next(size) {
      const available = buffer.metrics().available;
      if (available === 0) return null;
      return { batch: await buffer.take(Math.min(size, available)), skipped: 0 };
    },
    cursor: () => null,
    close: () => Promise.resolve(),
  };
}
