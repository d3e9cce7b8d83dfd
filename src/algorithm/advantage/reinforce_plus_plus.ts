/**
 * REINFORCE++ advantages (Hu 2025, arXiv:2501.03262), as verl and Trinity compute them: returns
 * `G_t = r_t + gamma * G_{t+1}` over each sequence's token rewards, whitened over all action
 * tokens of the step. Token rewards are the outcome reward on the last action token, or the
 * sample's `tokenRewards`: the paper's KL-in-reward is opt-in by passing
 * `klPenalizedRewards(...)` there (algorithm `kl_penalty_fn`); with none, no KL enters.
 */

import type { Args } from "../../util/registry.ts";
import {
  type AdvantageFn,
  type Advantages,
  type AdvantageSample,
  tokenRewards,
  whitenTokens,
} from "./advantage_fn.ts";

/** Arguments of the REINFORCE++ advantage fn. */
export type ReinforcePlusPlusArgs = {
  /** Discount of the returns. */
  gamma: number;
};

function reinforcePlusPlus(
  samples: readonly AdvantageSample[],
  { gamma }: ReinforcePlusPlusArgs,
): Advantages {
  const skipped = samples.map((s) => s.reward === null);
  const returns = samples.map((s, i) => {
    const rewards = tokenRewards(s, "reinforceplusplus", i);
    const g = new Float32Array(rewards.length);
    let running = 0;
    for (let t = rewards.length - 1; t >= 0; t--) g[t] = running = rewards[t] + gamma * running;
    return g;
  });
  const perToken = returns.map((g) => g.slice());
  const { mean, std } = whitenTokens(perToken, samples, skipped);
  returns.forEach((g, i) => g.forEach((_, t) => g[t] *= skipped[i] ? 0 : samples[i].actionMask[t]));
  return {
    perSequence: null,
    perToken,
    returns,
    skipped,
    metrics: {
      return_mean: mean,
      return_std: std,
      skipped_count: skipped.filter(Boolean).length,
    },
  };
}

/** REINFORCE++'s whitened discounted returns, computed in the trainer. */
export const reinforcePlusPlusAdvantage: AdvantageFn = {
  defaultArgs: { gamma: 1.0 },
  computeInTrainer: true,
  compute: (samples, args: Args) => reinforcePlusPlus(samples, args as ReinforcePlusPlusArgs),
};
