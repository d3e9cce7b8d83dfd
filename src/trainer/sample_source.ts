/**
 * The sample strategy as a {@link BatchSource}: each train step draws from the experience
 * buffer (and in `mix` the expert buffer) what the configured strategy picks. A step finds the
 * buffer empty only when the explorer kept nothing for it; the source ends once the explorer
 * has finished and the buffer is drained. Holds no experiences itself.
 */

import type { SampleBuffers, SampleStrategy } from "../algorithm/sample_strategy.ts";
import type { ExperienceBuffer } from "../buffer/experience_buffer.ts";
import type { Configured } from "../util/registry.ts";
import type { BatchSource } from "../buffer/batch_source.ts";

/** Batches drawn by `strategy` from `buffers`; `explorerDone` says no more experiences come. */
export function sampleStrategySource(
  strategy: Configured<SampleStrategy>,
  buffers: SampleBuffers,
  explorerDone: () => boolean,
): BatchSource {
  return {
    async next(size, options) {
      const available = buffers.experience.metrics().available;
      if (available === 0) return explorerDone() ? null : { batch: [] };
      const sample = await strategy.entry.sample(
        buffers,
        Math.min(size, available),
        strategy.args,
        options,
      );
      return { batch: sample.experiences, isExpert: sample.isExpert, metrics: sample.metrics };
    },
    cursor: () => null,
    metrics: () => bufferMetrics(buffers.experience),
    close: async () => await buffers.expert?.close(),
  };
}

/** Buffer counters for a step's metrics row. */
export function bufferMetrics(buffer: ExperienceBuffer): Record<string, number> {
  const m = buffer.metrics();
  return {
    "buffer/size": m.size,
    "buffer/dropped_stale": m.droppedStale,
    "buffer/rejected_future": m.rejectedFuture,
    "buffer/staleness_mean": m.meanStalenessTaken,
  };
}
