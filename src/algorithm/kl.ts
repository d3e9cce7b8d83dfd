/**
 * KL fns (Trinity's `KL_FN`): per-token estimators of KL(pi || pi_ref) from the log-probs of the
 * sampled tokens, as graph ops, after Schulman's "Approximating KL divergence" (k1, k2, k3) and
 * verl (`low_var_kl`, `abs`), and Trinity's `corrected_k3` (k3 weighted by the importance ratio
 * `clip(exp(logp - oldLogp), 0, 2)`, k3 without `oldLogp`). One estimate serves as a reward
 * penalty (read back by the caller) and as a loss term (`klLoss`, differentiable w.r.t. logp).
 * Differs from Trinity: no adaptive KL controller (`adaptive`, `target_kl` and `horizon` are
 * accepted: the controller only moves a reward penalty's coefficient), and `none` gives no
 * tensor.
 */

import { formatShape, sameShape, type Tensor } from "../graph/tensor.ts";
import { add, mul, sub } from "../ops/binary.ts";
import { affine, exp, neg, scale, square } from "../ops/unary.ts";
import { abs, clamp } from "./_piecewise.ts";
import { aggregateLoss, type LossAggMode, type LossTerm } from "./loss_agg.ts";
import { Registry } from "../util/registry.ts";

/** Arguments of every KL fn. */
export type KlArgs = {
  /** Weight of the KL: as reward penalty `reward - kl_coef * kl`, as loss `kl_coef * kl`. */
  kl_coef: number;
  /** Trinity's adaptive controller of a reward penalty's coefficient (not applied). */
  adaptive: boolean;
  /** The adaptive controller's target and horizon (unused). */
  target_kl: number | null;
  horizon: number | null;
};

/** The defaults of every KL fn (Trinity's). */
const KL_DEFAULTS: KlArgs = { kl_coef: 0.001, adaptive: false, target_kl: null, horizon: null };

/** A per-token KL estimator. */
export interface KlFn {
  /** `kl_coef: 0.001` and the controller's keys, Trinity's defaults. */
  readonly defaultArgs: KlArgs;
  /**
   * The estimate per token from `logp` (the policy's log-probs of the sampled tokens) and
   * `refLogp` (the reference model's), both [B, T]; null for `none`. As a reward penalty, pass
   * the behaviour policy's log-probs, read the result back and give the advantage fn
   * `tokenRewards` from `klPenalizedRewards` (src/algorithm/advantage/advantage_fn.ts).
   */
  perToken(logp: Tensor, refLogp: Tensor, oldLogp?: Tensor): Tensor | null;
}

/** An estimator of `d = logp - refLogp`, the per-token log-ratio log(pi / pi_ref). */
function estimator(of: (d: Tensor, logp: Tensor, oldLogp?: Tensor) => Tensor): KlFn {
  return {
    defaultArgs: KL_DEFAULTS,
    perToken(logp, refLogp, oldLogp) {
      if (!sameShape(logp.shape, refLogp.shape)) {
        throw new Error(
          `Cannot estimate KL: logp ${formatShape(logp.shape)} and refLogp ${
            formatShape(refLogp.shape)
          } differ in shape`,
        );
      }
      return of(sub(logp, refLogp), logp, oldLogp);
    },
  };
}

/** k3 of `d`: exp(-d) - 1 + d (unbiased, >= 0). */
const k3 = (d: Tensor): Tensor => add(affine(exp(neg(d)), 1, -1), d);

/** The built-in KL fns. */
export const KL_FN: Registry<KlFn> = new Registry<KlFn>("KL fn", [
  ["none", { defaultArgs: KL_DEFAULTS, perToken: () => null }],
  // k1: d (unbiased, can be negative).
  ["k1", estimator((d) => d)],
  // k2: d^2 / 2 (biased, low variance).
  ["k2", estimator((d) => scale(square(d), 0.5))],
  ["k3", estimator(k3)],
  // verl's low_var_kl: k3 with the log-ratio clamped to [-20, 20] and the result to [-10, 10].
  ["low_var_kl", estimator((d) => clamp(k3(clamp(d, -20, 20)), -10, 10))],
  ["abs", estimator(abs)],
  [
    "corrected_k3",
    estimator((d, logp, oldLogp) => {
      if (!oldLogp) return k3(d);
      return mul(clamp(exp(clamp(sub(logp, oldLogp), -20, 20)), 0, 2), k3(d));
    }),
  ],
]);

/**
 * The KL loss term `kl_coef * aggregate(kl)` over `mask` [B, T], with metric `kl_loss` (the
 * aggregate before the coefficient), or null for `none`. Differentiable w.r.t. `logp`.
 */
export function klLoss(
  fn: KlFn,
  args: Pick<KlArgs, "kl_coef">,
  logp: Tensor,
  refLogp: Tensor,
  mask: Tensor,
  mode: LossAggMode = "token-mean",
  scaleFactor: number | null = null,
  oldLogp?: Tensor,
): LossTerm | null {
  const kl = fn.perToken(logp, refLogp, oldLogp);
  if (!kl) return null;
  const value = aggregateLoss(kl, mask, mode, scaleFactor);
  return { loss: scale(value, args.kl_coef), metrics: { kl_loss: value } };
}
