/**
 * CHORD's token-weighted SFT losses (Zhang et al. 2025, arXiv:2508.11408; Trinity's `sft_is` and
 * `sft_phi`): the negative log-likelihood with each token weighted by a detached function of
 * its probability `p = exp(logp)`. `sft_is`: weight p (importance sampling towards the policy).
 * `sft_phi`: weight `p * (1 - p)`, which fades tokens the policy is sure or hopeless about; with
 * `cutoff_prob` < 1 the log-prob in the loss is capped at `log(cutoff_prob)`, so tokens above it
 * get no gradient.
 */

import type { Tensor } from "../../graph/tensor.ts";
import { mul } from "../../ops/binary.ts";
import { stopGradient } from "../../ops/stop_gradient.ts";
import { affine, exp, neg, relu } from "../../ops/unary.ts";
import { LOSS_AGG_DEFAULTS } from "../loss_agg.ts";
import type { Args } from "../../util/registry.ts";
import { aggregate, type PolicyLossFn, type PolicyLossInputs } from "./policy_loss_fn.ts";

/** `aggregate(-logp * sg(weight))` under the name `fn`, with its metric `<fn>_loss`. */
function weightedNll(fn: string, inputs: PolicyLossInputs, args: Args, logp: Tensor, w: Tensor) {
  const loss = aggregate(fn, args, mul(neg(logp), stopGradient(w)), inputs.mask);
  return { loss, metrics: { [`${fn}_loss`]: loss } };
}

/** SFT weighted by the token probability. */
export const sftIsPolicyLoss: PolicyLossFn = {
  defaultArgs: { ...LOSS_AGG_DEFAULTS },
  needs: [],
  microBatching: "tokens",
  build: (inputs, args) => weightedNll("sft_is", inputs, args, inputs.logp, exp(inputs.logp)),
};

/** SFT weighted by `p * (1 - p)`, the log-prob capped at `log(cutoff_prob)`. */
export const sftPhiPolicyLoss: PolicyLossFn = {
  defaultArgs: { ...LOSS_AGG_DEFAULTS, cutoff_prob: 1.0 },
  needs: [],
  microBatching: "tokens",
  build(inputs, args) {
    const cutoff = args.cutoff_prob as number;
    if (!(cutoff >= 0 && cutoff <= 1)) {
      throw new Error(
        `Cannot configure policy loss fn "sft_phi": key "cutoff_prob" expected a number in [0, 1], received ${cutoff}`,
      );
    }
    const p = exp(inputs.logp);
    const phi = mul(p, affine(p, -1, 1));
    // min(logp, c) as c - relu(c - logp): exactly c where it binds, so no gradient there.
    const c = Math.log(cutoff);
    const logp = cutoff < 1 ? affine(relu(affine(inputs.logp, -1, c)), -1, c) : inputs.logp;
    return weightedNll("sft_phi", inputs, args, logp, phi);
  },
};
