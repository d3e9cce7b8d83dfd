/**
 * sPPO's policy loss (Trinity's `sppo`, after the surrogate family of arXiv:2108.05828): the
 * log-ratio surrogate `-A * (logp - oldLogp)` on the tokens whose (detached) importance ratio
 * lies in `[1 / (1 + epsilon), 1 + epsilon]`, 0 on the others, aggregated by `loss_agg_mode`.
 */

import { mul, sub } from "../../ops/binary.ts";
import { stopGradient } from "../../ops/stop_gradient.ts";
import { affine, neg } from "../../ops/unary.ts";
import { atLeast, atMost } from "../_piecewise.ts";
import { LOSS_AGG_DEFAULTS, maskedMean } from "../loss_agg.ts";
import type { Args } from "../../util/registry.ts";
import { importanceRatio } from "./ppo.ts";
import { aggregate, input, type PolicyLossFn, type PolicyLossInputs } from "./policy_loss_fn.ts";

function sppoLoss(inputs: PolicyLossInputs, args: Args) {
  const fn = "sppo";
  const oldLogp = input(fn, inputs, "oldLogp");
  const advantages = input(fn, inputs, "advantages");
  const epsilon = args.epsilon as number;
  if (!(epsilon > 0)) {
    throw new Error(
      `Cannot configure policy loss fn "sppo": key "epsilon" expected a number > 0, received ${epsilon}`,
    );
  }
  const { logp, mask } = inputs;
  const ratio = stopGradient(importanceRatio(logp, oldLogp).ratio);
  const inRange = mul(atLeast(ratio, 1 / (1 + epsilon)), atMost(ratio, 1 + epsilon));
  const perToken = mul(mul(neg(advantages), sub(logp, oldLogp)), inRange);
  const loss = aggregate(fn, args, perToken, mask);
  return {
    loss,
    metrics: { pg_loss: loss, pg_clipfrac: maskedMean(affine(inRange, -1, 1), mask) },
  };
}

/** sPPO's in-range log-ratio surrogate (Trinity's defaults: epsilon 0.3, token-mean). */
export const sppoPolicyLoss: PolicyLossFn = {
  defaultArgs: { epsilon: 0.3, ...LOSS_AGG_DEFAULTS },
  needs: ["oldLogp", "advantages"],
  microBatching: "tokens",
  build: sppoLoss,
};
