/**
 * RLOO advantages (Ahmadian et al. 2024, "Back to Basics", arXiv:2402.14740; Kool et al. 2019):
 * each reward minus the mean of the other rewards of its group (leave-one-out baseline), as
 * Marin's GrpoBatchMaker computes them. A group of one has no baseline: advantage 0, skipped
 * (verl keeps its raw reward).
 */

import {
  type AdvantageFn,
  type AdvantageSample,
  broadcastScores,
  groupIndices,
  mean,
} from "./advantage_fn.ts";

function rlooScores(samples: readonly AdvantageSample[]) {
  const scores: (number | null)[] = samples.map(() => null);
  const counted: number[] = [];
  for (const members of groupIndices(samples).values()) {
    const rewards = members.map((i) => samples[i].reward as number);
    counted.push(...rewards);
    if (members.length < 2) continue;
    const sum = rewards.reduce((a, b) => a + b, 0);
    const n = members.length;
    members.forEach((i, k) => scores[i] = rewards[k] - (sum - rewards[k]) / (n - 1));
  }
  return broadcastScores(samples, scores, { reward_mean: mean(counted) });
}

/** RLOO's leave-one-out advantage (computed in the trainer, as Trinity's RLOO algorithm does). */
export const rlooAdvantage: AdvantageFn = {
  defaultArgs: {},
  computeInTrainer: true,
  compute: (samples) => rlooScores(samples),
};
