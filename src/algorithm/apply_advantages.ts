/**
 * Runs a configured advantage fn over experiences (grouped by task id) and writes the per-token
 * advantages and returns into them. Used by the experience pipeline (explorer side) for fns the
 * pipeline computes, and by the trainer for those it computes (`computeInTrainer`).
 */

import type { AdvantageFn } from "./advantage/advantage_fn.ts";
import type { Args } from "../util/registry.ts";
import type { Experience } from "../buffer/experience.ts";

/** A configured advantage fn. */
export interface ConfiguredAdvantageFn {
  entry: AdvantageFn;
  args: Args;
}

/**
 * Sets `advantages` and `returns` of each experience (in place) and returns the experiences
 * that carry a learning signal (not `skipped` by the fn) with the fn's metrics under
 * `advantage/`. Skipped ones keep zero advantages; `dropSkipped` leaves them out of the result.
 * `values`: the critic's values per token of each experience (for `ppo`'s GAE).
 */
export function applyAdvantages(
  fn: ConfiguredAdvantageFn,
  experiences: readonly Experience[],
  dropSkipped = false,
  values?: readonly (readonly number[])[],
): { experiences: Experience[]; metrics: Record<string, number> } {
  const result = fn.entry.compute(
    experiences.map((e, i) => ({
      groupId: e.info.taskId,
      reward: e.reward,
      actionMask: e.actionMask,
      values: values?.[i],
    })),
    fn.args,
  );
  experiences.forEach((e, i) => {
    e.advantages = Array.from(result.perToken[i]);
    e.returns = Array.from(result.returns[i]);
  });
  const metrics: Record<string, number> = {};
  for (const [key, value] of Object.entries(result.metrics)) metrics[`advantage/${key}`] = value;
  const skipped = result.skipped.filter(Boolean).length;
  metrics["advantage/skipped"] = skipped;
  return {
    experiences: dropSkipped ? experiences.filter((_, i) => !result.skipped[i]) : [...experiences],
    metrics,
  };
}
