/**
 * AsymRE advantages (Arnal et al. 2025, "Asymmetric REINFORCE for off-policy RL",
 * arXiv:2506.20520), as Trinity computes them: each reward minus its group's mean reward
 * shifted by `baseline_shift` (negative: a baseline below the mean, which weighs positive
 * examples more). A group of one has baseline 0 (its advantage is its reward), as in Trinity.
 * `asymre_verl` is the same fn computed by the trainer.
 */

import type { Args } from "../../util/registry.ts";
import type { AdvantageFn, AdvantageSample } from "./advantage_fn.ts";
import { broadcastScores, groupIndices, mean } from "./advantage_fn.ts";

function asymreScores(samples: readonly AdvantageSample[], args: Args) {
  const shift = args.baseline_shift as number;
  const scores: (number | null)[] = samples.map(() => null);
  const baselines: number[] = [];
  for (const members of groupIndices(samples).values()) {
    const rewards = members.map((i) => samples[i].reward as number);
    const baseline = members.length === 1 ? 0 : mean(rewards) + shift;
    baselines.push(baseline);
    members.forEach((i, k) => scores[i] = rewards[k] - baseline);
  }
  const counted = samples.flatMap((s) => s.reward === null ? [] : [s.reward]);
  return broadcastScores(samples, scores, {
    group_baseline: mean(baselines),
    reward_mean: mean(counted),
  });
}

/** AsymRE's shifted group baseline, computed in the experience pipeline. */
export const asymreAdvantage: AdvantageFn = {
  defaultArgs: { baseline_shift: -0.1 },
  computeInTrainer: false,
  compute: asymreScores,
};

/** `asymre` computed by the trainer (Trinity's deprecated verl form). */
export const asymreVerlAdvantage: AdvantageFn = { ...asymreAdvantage, computeInTrainer: true };
