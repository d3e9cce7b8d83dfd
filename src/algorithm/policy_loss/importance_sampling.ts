/**
 * The plain importance-sampling policy loss (Trinity's `importance_sampling`, used by on-policy
 * distillation when no clipping is wanted): `-A * r` per token, `r = exp(logp - oldLogp)` with
 * the log-ratio clamped to [-20, 20], aggregated by `loss_agg_mode`.
 */

import { mul } from "../../ops/binary.ts";
import { neg } from "../../ops/unary.ts";
import { LOSS_AGG_DEFAULTS, maskedMean } from "../loss_agg.ts";
import type { Args } from "../../util/registry.ts";
import { importanceRatio } from "./ppo.ts";
import { aggregate, input, type PolicyLossFn, type PolicyLossInputs } from "./policy_loss_fn.ts";

function importanceSamplingLoss(inputs: PolicyLossInputs, args: Args) {
  const fn = "importance_sampling";
  const oldLogp = input(fn, inputs, "oldLogp");
  const advantages = input(fn, inputs, "advantages");
  const { logRatio, ratio } = importanceRatio(inputs.logp, oldLogp);
  const loss = aggregate(fn, args, mul(neg(advantages), ratio), inputs.mask);
  return {
    loss,
    metrics: {
      pg_loss: loss,
      "ratio/mean": maskedMean(ratio, inputs.mask),
      approx_kl: maskedMean(neg(logRatio), inputs.mask),
    },
  };
}

/** `-A * r`, unclipped. */
export const importanceSamplingPolicyLoss: PolicyLossFn = {
  defaultArgs: { ...LOSS_AGG_DEFAULTS },
  needs: ["oldLogp", "advantages"],
  microBatching: "tokens",
  build: importanceSamplingLoss,
};
