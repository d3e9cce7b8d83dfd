/**
 * OPMD's policy loss (Trinity-RFT report, arXiv:2505.17826), as Trinity writes it:
 * `aggregate(-A * logp) / (1 + tau)`, a REINFORCE-style term scaled by the mirror-descent
 * regulariser. `oldLogp` is not read (Trinity takes it and ignores it).
 */

import { mul } from "../../ops/binary.ts";
import { neg, scale } from "../../ops/unary.ts";
import { LOSS_AGG_DEFAULTS } from "../loss_agg.ts";
import type { Args } from "../../util/registry.ts";
import { aggregate, input, type PolicyLossFn, type PolicyLossInputs } from "./policy_loss_fn.ts";

function opmdLoss(inputs: PolicyLossInputs, args: Args) {
  const advantages = input("opmd", inputs, "advantages");
  const tau = args.tau as number;
  const value = aggregate("opmd", args, mul(neg(advantages), inputs.logp), inputs.mask);
  const loss = scale(value, 1 / (1 + tau));
  return { loss, metrics: { opmd_loss: loss } };
}

/** OPMD's regularised policy-gradient loss. */
export const opmdPolicyLoss: PolicyLossFn = {
  defaultArgs: { tau: 1.0, ...LOSS_AGG_DEFAULTS },
  needs: ["advantages"],
  microBatching: "tokens",
  build: opmdLoss,
};
