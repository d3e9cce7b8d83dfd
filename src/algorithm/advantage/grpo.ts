/**
 * GRPO advantages (Shao et al. 2024, "DeepSeekMath", arXiv:2402.03300): each reward minus its
 * group's mean, divided by the group's std (unbiased, + `epsilon`). Beyond the paper:
 * `std_norm: "batch"` divides by the std of all rewards of the step (LitePPO's group mean, batch
 * std), `std_norm: "none"` does not divide (Dr. GRPO, arXiv:2503.20783), and `std_threshold`
 * skips groups whose std is <= it (0: all rewards equal, DAPO's dynamic-sampling filter).
 * Differs from Trinity: a group of one gets 0 and is skipped (Trinity gives reward / (1 + eps)).
 */

import { type Args, checkChoice } from "../../util/registry.ts";
import {
  type AdvantageFn,
  type AdvantageSample,
  broadcastScores,
  groupIndices,
  mean,
  std,
} from "./advantage_fn.ts";

/** Arguments of the GRPO advantage fn. */
export type GrpoArgs = {
  /** Added to the std before dividing. */
  epsilon: number;
  /** Groups with a reward std <= this are skipped (advantage 0); null: none are. */
  std_threshold: number | null;
  /** Divide by the group's std (`group`), the batch's (`batch`) or not at all (`none`). */
  std_norm: string;
};

const STD_NORMS = ["group", "batch", "none"] as const;

/** Scores of one step's samples; null where skipped. */
function grpoScores(samples: readonly AdvantageSample[], args: GrpoArgs) {
  const norm = checkChoice('advantage fn "grpo"', "std_norm", args.std_norm, STD_NORMS);
  const groups = groupIndices(samples);
  const counted = [...groups.values()].flat().map((i) => samples[i].reward as number);
  const batchStd = std(counted);
  const scores: (number | null)[] = samples.map(() => null);
  const groupStds: number[] = [];
  for (const members of groups.values()) {
    if (members.length < 2) continue;
    const rewards = members.map((i) => samples[i].reward as number);
    const m = mean(rewards);
    const s = std(rewards);
    groupStds.push(s);
    if (args.std_threshold !== null && s <= args.std_threshold) continue;
    const divisor = norm === "group"
      ? s + args.epsilon
      : norm === "batch"
      ? batchStd + args.epsilon
      : 1;
    members.forEach((i, k) => scores[i] = (rewards[k] - m) / divisor);
  }
  return broadcastScores(samples, scores, {
    reward_mean: mean(counted),
    reward_std: batchStd,
    group_std_mean: mean(groupStds),
  });
}

/** GRPO's group-normalised advantage, computed in the experience pipeline. */
export const grpoAdvantage: AdvantageFn = {
  defaultArgs: { epsilon: 1e-6, std_threshold: null, std_norm: "group" },
  computeInTrainer: false,
  compute: (samples, args: Args) => grpoScores(samples, args as GrpoArgs),
};
