/**
 * GRPO advantages (Shao et al. 2024, "DeepSeekMath", arXiv:2402.03300): each reward minus its
 * group's mean, divided by the group's std (unbiased, + `epsilon`). Beyond the paper:
 * `std_norm: "batch"` divides by the std of all rewards of the step (LitePPO's group mean, batch
 * std), `std_norm: "none"` does not divide (Dr. GRPO, arXiv:2503.20783), and `std_threshold`
 * skips groups whose std is <= it (0: all rewards equal, DAPO's dynamic-sampling filter).
 * Trinity's keys: `std_cal_level: "batch"` is `std_norm: "batch"`; `rank_penalty` scales each
 * reward by `1 - rank * rank_penalty`, rank being the sample's place (0 to (n - 1) / n) by its
 * mean log-prob within the group (arXiv:2506.02355); `duplicate_experiences` (with a
 * threshold) trains kept groups chosen at random once more in place of the skipped ones
 * (Polaris). Differs from Trinity: a group of one gets 0 and is skipped (Trinity gives
 * reward / (1 + eps)). `grpo_verl` is the same fn computed by the trainer.
 */

import { type Args, checkChoice } from "../../util/registry.ts";
import { mulberry32 } from "../../util/random.ts";
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
  /** Trinity's spelling: `batch` divides by the batch's std. */
  std_cal_level: string;
  /** Penalty on a reward by its sample's log-prob rank in the group; null: none. */
  rank_penalty: number | null;
  /** Train kept groups again in place of skipped ones. */
  duplicate_experiences: boolean;
};

const STD_NORMS = ["group", "batch", "none"] as const;

/** Scores of one step's samples; null where skipped. */
function grpoScores(samples: readonly AdvantageSample[], args: GrpoArgs) {
  const component = 'advantage fn "grpo"';
  checkChoice(component, "std_cal_level", args.std_cal_level, ["group", "batch"]);
  const norm = args.std_cal_level === "batch"
    ? "batch"
    : checkChoice(component, "std_norm", args.std_norm, STD_NORMS);
  const groups = groupIndices(samples);
  const counted = [...groups.values()].flat().map((i) => samples[i].reward as number);
  const batchStd = std(counted);
  const scores: (number | null)[] = samples.map(() => null);
  const groupStds: number[] = [];
  for (const members of groups.values()) {
    if (members.length < 2) continue;
    const rewards = penalised(samples, members, args.rank_penalty);
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
  const result = broadcastScores(samples, scores, {
    reward_mean: mean(counted),
    reward_std: batchStd,
    group_std_mean: mean(groupStds),
  });
  if (args.duplicate_experiences && args.std_threshold !== null) {
    result.duplicates = duplicates(samples, groups, scores);
  }
  return result;
}

/** The rewards of a group's `members`, scaled by their log-prob rank when `penalty` is set. */
function penalised(
  samples: readonly AdvantageSample[],
  members: readonly number[],
  penalty: number | null,
): number[] {
  const rewards = members.map((i) => samples[i].reward as number);
  if (penalty === null) return rewards;
  const meanLogprob = members.map((i) => {
    const { logprobs, actionMask } = samples[i];
    if (!logprobs) {
      throw new Error('Cannot compute advantage fn "grpo": rank_penalty needs logprobs');
    }
    let sum = 0;
    let n = 0;
    for (let t = 0; t < actionMask.length; t++) {
      if (actionMask[t]) [sum, n] = [sum + logprobs[t], n + 1];
    }
    return n ? sum / n : 0;
  });
  const order = meanLogprob.map((_, k) => k).sort((a, b) => meanLogprob[a] - meanLogprob[b]);
  const rank = new Array<number>(members.length);
  order.forEach((k, place) => rank[k] = place / members.length);
  return rewards.map((r, k) => r * (1 - rank[k] * penalty));
}

/**
 * Samples of kept groups (drawn at random, a group at a time) to train on again, one group per
 * skipped group of two or more samples.
 */
function duplicates(
  samples: readonly AdvantageSample[],
  groups: Map<string | number, number[]>,
  scores: readonly (number | null)[],
): number[] {
  const all = [...groups.values()];
  const kept = all.filter((members) => scores[members[0]] !== null);
  const skipped = all.length - kept.length;
  if (kept.length === 0) return [];
  const random = mulberry32(samples.length * 7919 + skipped);
  return Array.from({ length: skipped }, () => kept[Math.floor(random() * kept.length)]).flat();
}

/** GRPO's group-normalised advantage, computed in the experience pipeline. */
export const grpoAdvantage: AdvantageFn = {
  defaultArgs: {
    epsilon: 1e-6,
    std_threshold: null,
    std_norm: "group",
    std_cal_level: "group",
    rank_penalty: null,
    duplicate_experiences: false,
  },
  computeInTrainer: false,
  compute: (samples, args: Args) => grpoScores(samples, args as unknown as GrpoArgs),
};

/** `grpo` computed by the trainer (Trinity's `grpo_verl`). */
export const grpoVerlAdvantage: AdvantageFn = { ...grpoAdvantage, computeInTrainer: true };
