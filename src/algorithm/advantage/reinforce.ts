/**
 * REINFORCE advantages (Williams 1992): the reward itself, or minus the mean reward of the step
 * with `baseline: "batch_mean"`. Trinity's `reinforce` has no baseline option (it is "none").
 */

import { type Args, checkChoice } from "../../util/registry.ts";
import { type AdvantageFn, type AdvantageSample, broadcastScores, mean } from "./advantage_fn.ts";

/** Arguments of the REINFORCE advantage fn. */
export type ReinforceArgs = {
  /** `none`: advantage = reward; `batch_mean`: reward minus the step's mean reward. */
  baseline: string;
};

function reinforceScores(samples: readonly AdvantageSample[], args: ReinforceArgs) {
  const baseline = checkChoice('advantage fn "reinforce"', "baseline", args.baseline, [
    "none",
    "batch_mean",
  ]);
  const counted = samples.flatMap((s) => s.reward === null ? [] : [s.reward]);
  const b = baseline === "batch_mean" ? mean(counted) : 0;
  return broadcastScores(samples, samples.map((s) => s.reward === null ? null : s.reward - b), {
    reward_mean: mean(counted),
  });
}

/** REINFORCE's advantage, computed in the experience pipeline. */
export const reinforceAdvantage: AdvantageFn = {
  defaultArgs: { baseline: "none" },
  computeInTrainer: false,
  compute: (samples, args: Args) => reinforceScores(samples, args as ReinforceArgs),
};
