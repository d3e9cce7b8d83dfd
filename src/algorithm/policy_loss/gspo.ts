/**
 * GSPO's policy loss (Zheng et al. 2025, arXiv:2507.18071) in its GSPO-token form, as Trinity
 * writes it: the sequence-level ratio `s = exp(mean over action tokens of (logp - oldLogp))`
 * enters each token as `exp(logp - sg(logp) + sg(log s))` (value s, gradient s * dlogp), and
 * the clipped surrogate of PPO is taken with it. With per-sequence advantages and the default
 * `seq-mean-token-mean` this is the paper's sequence-level objective. No dual clip (as the paper).
 */

import { add, mul, sub } from "../../ops/binary.ts";
import { stopGradient } from "../../ops/stop_gradient.ts";
import { exp, neg } from "../../ops/unary.ts";
import { clamp, maximum } from "../_piecewise.ts";
import { LOSS_AGG_DEFAULTS, maskedMean, maskedRowMean, meanAll } from "../loss_agg.ts";
import type { Args } from "../../util/registry.ts";
import {
  aggregate,
  clipBounds,
  clippedByPpo,
  input,
  type PolicyLossFn,
  type PolicyLossInputs,
} from "./policy_loss_fn.ts";

function gspoLoss(inputs: PolicyLossInputs, args: Args) {
  const fn = "gspo";
  const oldLogp = input(fn, inputs, "oldLogp");
  const advantages = input(fn, inputs, "advantages");
  const [lo, hi] = clipBounds(fn, args);
  const { logp, mask } = inputs;
  const logRatio = sub(logp, oldLogp);
  const seqLogRatio = maskedRowMean(logRatio, mask); // [B, 1]
  const ratio = exp(add(sub(logp, stopGradient(logp)), stopGradient(seqLogRatio)));
  const negAdv = neg(advantages);
  const perToken = maximum(mul(negAdv, ratio), mul(negAdv, clamp(ratio, lo, hi)));
  const loss = aggregate(fn, args, perToken, mask);
  return {
    loss,
    metrics: {
      pg_loss: loss,
      pg_clipfrac: maskedMean(clippedByPpo(ratio, advantages, lo, hi), mask),
      ppo_kl: maskedMean(neg(logRatio), mask),
      ppo_kl_seq: neg(meanAll(seqLogRatio)),
    },
  };
}

/** GSPO's sequence-ratio clipped surrogate (Trinity's defaults: very tight clip bounds). */
export const gspoPolicyLoss: PolicyLossFn = {
  defaultArgs: {
    clip_range: null,
    clip_range_low: 0.0003,
    clip_range_high: 0.0004,
    ...LOSS_AGG_DEFAULTS,
    loss_agg_mode: "seq-mean-token-mean",
  },
  needs: ["oldLogp", "advantages"],
  microBatching: "rows",
  build: gspoLoss,
};
