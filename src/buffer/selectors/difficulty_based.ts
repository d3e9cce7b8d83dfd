/**
 * `difficulty_based` (Trinity-RFT's `DifficultyBasedSelector`, BOTS): draws tasks whose
 * estimated pass rate is near `target_reward`. The estimate is `BetaPassRateEstimator`'s over
 * two anchor feature columns (`feature_keys`), updated online from the mean reward of each drawn
 * task's rollouts. A batch takes the `count` best scores `-|target - p|` when `tau` is 0, else
 * samples without replacement from softmax(score / tau), seeded by (seed, first draw), so a run
 * and its resume draw alike. `do_sample` scores a Beta draw of each belief (Thompson sampling)
 * instead of its mean. A batch larger than the taskset repeats rows only after all are drawn.
 */

import { betaSample, mulberry32 } from "../../util/random.ts";
import { type BetaEstimatorState, BetaPassRateEstimator } from "./beta_pass_rate_estimator.ts";
import type { SelectorFactory } from "./selector.ts";

/** Online difficulty-targeted sampling; kwargs as Trinity's (`m`, `lamb`, `rho`, ...). */
export const difficultyBasedSelector: SelectorFactory = {
  defaultArgs: {
    m: 16,
    lamb: 0.2,
    rho: 0.2,
    target_reward: 1.0,
    tau: 1.0,
    do_sample: false,
    adaptive_rho: false,
    cap_coef_update_discount: 0.9,
  },
  create: ({ size, seed, featureKeys, feature }, args) => {
    if (featureKeys.length !== 2) {
      throw new Error(
        `difficulty_based expected 2 feature keys (two anchor pass rates per task), found ${featureKeys.length}`,
      );
    }
    const [low, high] = featureKeys.map(feature);
    const estimator = new BetaPassRateEstimator(
      low.map((a, i) => [a, high[i]] as const),
      {
        m: args.m as number,
        lamb: args.lamb as number,
        rho: args.rho as number,
        capDiscount: args.cap_coef_update_discount as number,
        adaptiveRho: args.adaptive_rho as boolean,
      },
    );
    const target = args.target_reward as number, tau = args.tau as number;
    if (!(tau >= 0)) throw new Error(`difficulty_based expected tau >= 0, found ${tau}`);
    return {
      select(first, count) {
        const next = mulberry32((seed ^ Math.imul(first + 1, 0x9e3779b9)) >>> 0);
        const scores = Array.from({ length: size }, (_, i) => {
          const p = args.do_sample ? betaSample(...estimator.belief(i), next) : estimator.mean(i);
          return -Math.abs(target - p);
        });
        const picked: number[] = [];
        while (picked.length < count) {
          const round = Math.min(size, count - picked.length);
          picked.push(
            ...(tau === 0 ? topK(scores, round) : softmaxDraws(scores, tau, round, next)),
          );
        }
        return picked;
      },
      update: (indices, values) => estimator.update(indices, values),
      estimate: (indices) => indices.map((i) => estimator.mean(i)),
      state: () => estimator.state(),
      restore: (state) => estimator.restore(state as BetaEstimatorState),
    };
  },
};

/** The `k` indices of the highest scores, best first (ties: lower index first). */
function topK(scores: readonly number[], k: number): number[] {
  return scores.map((_, i) => i).sort((a, b) => scores[b] - scores[a] || a - b).slice(0, k);
}

/** `k` distinct indices drawn one after another with probability softmax(score / tau). */
function softmaxDraws(
  scores: readonly number[],
  tau: number,
  k: number,
  next: () => number,
): number[] {
  const top = Math.max(...scores);
  const weights = scores.map((s) => Math.exp((s - top) / tau));
  let total = weights.reduce((a, b) => a + b, 0);
  const picked: number[] = [];
  while (picked.length < k) {
    let u = next() * total, i = 0;
    while (i < weights.length - 1 && (weights[i] === 0 || (u -= weights[i]) >= 0)) i++;
    if (weights[i] === 0) i = weights.findLastIndex((w) => w > 0);
    picked.push(i);
    total -= weights[i];
    weights[i] = 0;
  }
  return picked;
}
