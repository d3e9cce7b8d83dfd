/**
 * Supervised fine-tuning loss: the negative log-likelihood of the masked tokens, aggregated by
 * `loss_agg_mode`. Differs from Trinity: its `use_token_level_loss` (true = token-mean, false =
 * seq-mean-token-mean) is spelled as `loss_agg_mode`, like the other losses.
 */

import { neg } from "../../ops/unary.ts";
import { LOSS_AGG_DEFAULTS } from "../loss_agg.ts";
import type { Args } from "../../util/registry.ts";
import { aggregate, type PolicyLossFn, type PolicyLossInputs } from "./policy_loss_fn.ts";

function sftLoss(inputs: PolicyLossInputs, args: Args) {
  const loss = aggregate("sft", args, neg(inputs.logp), inputs.mask);
  return { loss, metrics: { sft_loss: loss } };
}

/** Negative log-likelihood. */
export const sftPolicyLoss: PolicyLossFn = {
  defaultArgs: { ...LOSS_AGG_DEFAULTS },
  needs: [],
  microBatching: "tokens",
  build: sftLoss,
};
