/**
 * PPO advantages by GAE (Schulman et al. 2016, arXiv:1506.02438) from token rewards and critic
 * values, as in verl: `delta_t = r_t + gamma * V_{t+1} - V_t`,
 * `A_t = delta_t + gamma * lam * A_{t+1}`, returns `A_t + V_t`, then the advantages whitened over
 * all action tokens of the step. The recursion runs over action tokens only (verl skips
 * observation tokens the same way; rewards placed on them are ignored); the last action token
 * bootstraps from 0.
 */

import type { Args } from "../../util/registry.ts";
import {
  type AdvantageFn,
  type Advantages,
  type AdvantageSample,
  checkLength,
  tokenRewards,
  whitenTokens,
} from "./advantage_fn.ts";

/** Arguments of the GAE advantage fn. */
export type GaeArgs = {
  /** Discount. */
  gamma: number;
  /** GAE's lambda: 1 gives Monte-Carlo returns minus values, 0 one-step TD errors. */
  lam: number;
};

/** GAE advantages and returns of one sample (0 outside its action mask). */
function gae(sample: AdvantageSample, index: number, { gamma, lam }: GaeArgs) {
  const mask = sample.actionMask;
  if (!sample.values) {
    throw new Error(
      `Cannot compute advantage fn "ppo": sample ${index} has no values (critic values per token)`,
    );
  }
  checkLength("ppo", index, "values", sample.values, mask.length);
  const values = sample.values;
  const rewards = tokenRewards(sample, "ppo", index);
  const advantages = new Float32Array(mask.length);
  const returns = new Float32Array(mask.length);
  let nextValue = 0;
  let running = 0;
  for (let t = mask.length - 1; t >= 0; t--) {
    if (!mask[t]) continue;
    running = rewards[t] + gamma * nextValue - values[t] + gamma * lam * running;
    advantages[t] = running;
    returns[t] = running + values[t];
    nextValue = values[t];
  }
  return { advantages, returns };
}

function gaeAdvantages(samples: readonly AdvantageSample[], args: GaeArgs): Advantages {
  const skipped = samples.map((s) => s.reward === null);
  const results = samples.map((s, i) =>
    skipped[i]
      ? {
        advantages: new Float32Array(s.actionMask.length),
        returns: new Float32Array(s.actionMask.length),
      }
      : gae(s, i, args)
  );
  const perToken = results.map((r) => r.advantages);
  const { mean, std } = whitenTokens(perToken, samples, skipped);
  return {
    perSequence: null,
    perToken,
    returns: results.map((r) => r.returns),
    skipped,
    metrics: {
      advantage_mean: mean,
      advantage_std: std,
      skipped_count: skipped.filter(Boolean).length,
    },
  };
}

/** PPO's GAE advantages and value targets, computed in the trainer (it needs the critic). */
export const ppoAdvantage: AdvantageFn = {
  defaultArgs: { gamma: 1.0, lam: 1.0 },
  computeInTrainer: true,
  compute: (samples, args: Args) => gaeAdvantages(samples, args as GaeArgs),
};
