/**
 * SAPO's policy loss (Soft Adaptive Policy Optimization, Gao et al. 2025, arXiv:2511.20347):
 * PPO's hard clip replaced by a soft gate, per token `-f(r) * A` with
 * `f(r) = 4 / tau * sigmoid(tau * (r - 1))`, `tau = tau_pos` where A > 0 and `tau_neg` elsewhere,
 * `r = exp(logp - oldLogp)` (log-ratio clamped to [-20, 20] as in `ppo`). Autodiff gives the
 * paper's gradient `4 sigmoid(1 - sigmoid) r A dlogp` (weight 1 at r = 1, fading off-policy).
 * Trinity's `sapo` instead detaches the gate and multiplies it by logp, `-A * sg(f(r)) * logp`
 * (weight `f(r)`: 2 / tau at r = 1, never fading): `detach_gate: true` reproduces it. Other
 * args and defaults are Trinity's.
 */

import type { Tensor } from "../../graph/tensor.ts";
import { add, mul } from "../../ops/binary.ts";
import { stopGradient } from "../../ops/stop_gradient.ts";
import { affine, neg, scale, sigmoid } from "../../ops/unary.ts";
import { step } from "../_piecewise.ts";
import { LOSS_AGG_DEFAULTS, maskedMean } from "../loss_agg.ts";
import type { Args } from "../registry.ts";
import { importanceRatio } from "./ppo.ts";
import { aggregate, input, type PolicyLossFn, type PolicyLossInputs } from "./policy_loss_fn.ts";

/** The soft gate `4 / tau * sigmoid(tau * (r - 1))` of `ratio`. */
function softGate(ratio: Tensor, tau: number): Tensor {
  return scale(sigmoid(affine(ratio, tau, -tau)), 4 / tau);
}

/** `tau_pos` and `tau_neg`, checked: both > 0 and tau_neg >= tau_pos (as Trinity requires). */
function temperatures(args: Args): [number, number] {
  const [tauPos, tauNeg] = [args.tau_pos as number, args.tau_neg as number];
  if (!(tauPos > 0) || !(tauNeg >= tauPos)) {
    throw new Error(
      `Cannot configure policy loss fn "sapo": expected tau_pos > 0 and tau_neg >= tau_pos, received tau_pos ${tauPos}, tau_neg ${tauNeg}`,
    );
  }
  return [tauPos, tauNeg];
}

function sapoLoss(inputs: PolicyLossInputs, args: Args) {
  const fn = "sapo";
  const oldLogp = input(fn, inputs, "oldLogp");
  const advantages = input(fn, inputs, "advantages");
  const [tauPos, tauNeg] = temperatures(args);
  const { mask } = inputs;
  const { logRatio, ratio } = importanceRatio(inputs.logp, oldLogp);
  // isPositive is exactly 0 or 1, so the blend picks one gate per token.
  const isPositive = step(advantages);
  const gate = add(
    mul(isPositive, softGate(ratio, tauPos)),
    mul(affine(isPositive, -1, 1), softGate(ratio, tauNeg)),
  );
  // Trinity's form: a constant weight -A * f(r) on logp, so the gradient is that weight.
  const perToken = args.detach_gate
    ? mul(mul(neg(advantages), stopGradient(gate)), inputs.logp)
    : mul(neg(advantages), gate);
  const loss = aggregate(fn, args, perToken, mask);
  return {
    loss,
    metrics: {
      pg_loss: loss,
      avg_soft_gate: maskedMean(gate, mask),
      ratio_mean: maskedMean(ratio, mask),
      pos_adv_frac: maskedMean(mul(isPositive, mask), mask),
      ppo_kl: maskedMean(neg(logRatio), mask),
    },
  };
}

/** SAPO's soft-gated surrogate (Trinity's defaults: tau_pos 1, tau_neg 1.05, token-mean). */
export const sapoPolicyLoss: PolicyLossFn = {
  defaultArgs: { tau_pos: 1.0, tau_neg: 1.05, detach_gate: false, ...LOSS_AGG_DEFAULTS },
  needs: ["oldLogp", "advantages"],
  microBatching: "tokens",
  build: sapoLoss,
};
