/**
 * CISPO's policy loss (MiniMax-M1, arXiv:2506.13585): REINFORCE weighted by the clipped and
 * detached importance ratio, `-A * sg(clip(r, 1 - low, 1 + high)) * logp`, so every token keeps
 * a gradient. Differs from the paper: the log-ratio is clamped to [-20, 20] as in `ppo`; and
 * `drop_clipped_tokens: true` reproduces Trinity, which also zeroes the tokens PPO would clip
 * (the paper's M_{i,t} of its unified form; off by default, as CISPO itself keeps them).
 * Trinity's `enable_mask_clip` does the same with bounds of their own (`mask_clip_range_low`,
 * `mask_clip_range_high`).
 */

import { add, mul } from "../../ops/binary.ts";
import { stopGradient } from "../../ops/stop_gradient.ts";
import { affine, neg } from "../../ops/unary.ts";
import { clamp, step } from "../_piecewise.ts";
import { LOSS_AGG_DEFAULTS, maskedMean } from "../loss_agg.ts";
import type { Args } from "../../util/registry.ts";
import { importanceRatio } from "./ppo.ts";
import {
  aggregate,
  clipBounds,
  clippedByPpo,
  input,
  type PolicyLossFn,
  type PolicyLossInputs,
} from "./policy_loss_fn.ts";

function cispoLoss(inputs: PolicyLossInputs, args: Args) {
  const fn = "cispo";
  const oldLogp = input(fn, inputs, "oldLogp");
  const advantages = input(fn, inputs, "advantages");
  const [lo, hi] = clipBounds(fn, args);
  const { logp, mask } = inputs;
  const { logRatio, ratio } = importanceRatio(logp, oldLogp);
  const detached = stopGradient(ratio);
  const ppoClipped = clippedByPpo(detached, advantages, lo, hi);
  // -A * sg(clip(r)), a constant to autodiff: the gradient is this times dlogp.
  let weight = mul(neg(advantages), clamp(detached, lo, hi));
  if (args.drop_clipped_tokens) weight = mul(weight, affine(ppoClipped, -1, 1));
  if (args.enable_mask_clip) {
    const [maskLo, maskHi] = [
      1 - (args.mask_clip_range_low as number),
      1 + (args.mask_clip_range_high as number),
    ];
    weight = mul(weight, affine(clippedByPpo(detached, advantages, maskLo, maskHi), -1, 1));
  }
  const loss = aggregate(fn, args, mul(weight, logp), mask);
  const outside = add(step(affine(detached, 1, -hi)), step(affine(detached, -1, lo)));
  return {
    loss,
    metrics: {
      pg_loss: loss,
      is_clipfrac: maskedMean(outside, mask),
      pg_clipfrac: maskedMean(ppoClipped, mask),
      ppo_kl: maskedMean(neg(logRatio), mask),
    },
  };
}

/** CISPO's clipped-IS-weight REINFORCE (defaults of the paper: no lower bound, high 0.28). */
export const cispoPolicyLoss: PolicyLossFn = {
  defaultArgs: {
    clip_range: null,
    clip_range_low: 1.0,
    clip_range_high: 0.28,
    drop_clipped_tokens: false,
    enable_mask_clip: false,
    mask_clip_range_low: 1.0,
    mask_clip_range_high: 0.28,
    ...LOSS_AGG_DEFAULTS,
  },
  needs: ["oldLogp", "advantages"],
  microBatching: "tokens",
  build: cispoLoss,
};
