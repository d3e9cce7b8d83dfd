/**
 * TOPR's policy loss (Tapered Off-Policy REINFORCE, Le Roux et al. 2025, arXiv:2503.14286) as
 * Trinity writes it: `-sg(alpha) * A * logp` per token, with `alpha = clip(r, 0, 1)` where the
 * advantage is at most `advantage_threshold` (negative examples are tapered by the importance
 * ratio `r = exp(logp - oldLogp)`) and 1 elsewhere (positive examples are plain SFT-like
 * REINFORCE). The log-ratio is clamped to [-20, 20] as in `ppo` (Trinity does not clamp; the
 * weight is clipped to [0, 1] either way).
 */

import { add, mul } from "../../ops/binary.ts";
import { stopGradient } from "../../ops/stop_gradient.ts";
import { affine, neg } from "../../ops/unary.ts";
import { atMost, clamp } from "../_piecewise.ts";
import { LOSS_AGG_DEFAULTS, maskedMean } from "../loss_agg.ts";
import type { Args } from "../../util/registry.ts";
import { importanceRatio } from "./ppo.ts";
import { aggregate, input, type PolicyLossFn, type PolicyLossInputs } from "./policy_loss_fn.ts";

function toprLoss(inputs: PolicyLossInputs, args: Args) {
  const fn = "topr";
  const oldLogp = input(fn, inputs, "oldLogp");
  const advantages = input(fn, inputs, "advantages");
  const { logp, mask } = inputs;
  const { ratio } = importanceRatio(logp, oldLogp);
  const tapered = atMost(advantages, args.advantage_threshold as number);
  // alpha = tapered ? clip(r, 0, 1) : 1 (tapered is exactly 0 or 1).
  const alpha = add(mul(tapered, clamp(ratio, 0, 1)), affine(tapered, -1, 1));
  const perToken = mul(mul(neg(advantages), stopGradient(alpha)), logp);
  const loss = aggregate(fn, args, perToken, mask);
  const [avgAlpha, avgRatio] = [alpha, ratio].map((x) => maskedMean(x, mask));
  return { loss, metrics: { topr_loss: loss, avg_alpha: avgAlpha, avg_ratio: avgRatio } };
}

/** TOPR's tapered REINFORCE (Trinity's defaults: threshold 0, token-mean). */
export const toprPolicyLoss: PolicyLossFn = {
  defaultArgs: { advantage_threshold: 0.0, ...LOSS_AGG_DEFAULTS },
  needs: ["oldLogp", "advantages"],
  microBatching: "tokens",
  build: toprLoss,
};
