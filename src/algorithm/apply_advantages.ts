/**
 * Runs a configured advantage fn over experiences (grouped by task id) and writes the per-token
 * advantages and returns into them. Used by the experience pipeline (explorer side) for fns the
 * pipeline computes, and by the trainer for those it computes (`computeInTrainer`).
 */

import type { AdvantageFn, AdvantageSample } from "./advantage/advantage_fn.ts";
import type { Args } from "../util/registry.ts";
import { type Experience, newEid } from "../buffer/experience.ts";

/** A configured advantage fn. */
export interface ConfiguredAdvantageFn {
  entry: AdvantageFn;
  args: Args;
}

/** What the trainer computed per experience for fns that read the policy being trained. */
export interface TrainerTokenStats {
  /** Critic values per token (`ppo`'s GAE). */
  values?: readonly (readonly number[])[];
  /** Per token: the policy's log-probs, entropies and (when asked) nec. */
  current?: readonly NonNullable<AdvantageSample["current"]>[];
}

/**
 * Sets `advantages` and `returns` of each experience (in place) and returns the experiences with
 * the fn's metrics under `advantage/`; those the fn skips keep zero advantages (no learning
 * signal). Tokens the fn drops leave the experience's action mask; samples it duplicates are
 * appended as copies with fresh ids.
 */
export function applyAdvantages(
  fn: ConfiguredAdvantageFn,
  experiences: readonly Experience[],
  stats: TrainerTokenStats = {},
): { experiences: Experience[]; metrics: Record<string, number> } {
  const result = fn.entry.compute(
    experiences.map((e, i) => ({
      groupId: e.info.taskId,
      reward: e.reward,
      actionMask: e.actionMask,
      values: stats.values?.[i],
      runId: e.info.runId,
      logprobs: e.logprobs,
      teacherLogprobs: e.teacherLogprobs,
      current: stats.current?.[i],
    })),
    fn.args,
  );
  experiences.forEach((e, i) => {
    e.advantages = Array.from(result.perToken[i]);
    e.returns = Array.from(result.returns[i]);
    const mask = result.actionMasks?.[i];
    if (mask) {
      e.actionMask = Array.from(mask);
      e.logprobs = e.logprobs.map((lp, t) => (mask[t] ? lp : 0));
    }
  });
  const metrics: Record<string, number> = {};
  for (const [key, value] of Object.entries(result.metrics)) metrics[`advantage/${key}`] = value;
  const skipped = result.skipped.filter(Boolean).length;
  metrics["advantage/skipped"] = skipped;
  const copies = (result.duplicates ?? []).map((i) => duplicate(experiences[i]));
  if (copies.length) metrics["advantage/duplicated"] = copies.length;
  return { experiences: [...experiences, ...copies], metrics };
}

/** A copy of `exp` under a fresh unique id. */
function duplicate(exp: Experience): Experience {
  const copy = structuredClone(exp);
  copy.info.eid = newEid(exp.info.taskId, exp.info.runId);
  return copy;
}
