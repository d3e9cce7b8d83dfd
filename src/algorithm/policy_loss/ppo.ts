/**
 * PPO's clipped surrogate (Schulman et al. 2017, arXiv:1707.06347) per token, as verl and Trinity
 * write it: `max(-A * r, -A * clip(r, 1 - low, 1 + high))` with `r = exp(logp - oldLogp)`, the
 * log-ratio clamped to [-20, 20]. Beyond the paper: asymmetric bounds (DAPO's clip-higher,
 * `clip_range_low`/`clip_range_high`) and dual-clip (Ye et al. 2020): for A < 0 the loss is
 * capped at `-A * clip_ratio_c`. Trinity's extras: `enable_sequence_masking` (DeepSeek-V3.2)
 * drops the tokens with A < 0 of sequences whose mean KL (`oldLogp - logp` over the action
 * tokens) exceeds `delta_sequence_masking`; `fallback_to_policy_gradient` takes the ratio
 * against the policy itself (`logp - sg(logp)`: value 1, the plain policy gradient).
 */

import type { Tensor } from "../../graph/tensor.ts";
import { add, mul, sub } from "../../ops/binary.ts";
import { stopGradient } from "../../ops/stop_gradient.ts";
import { affine, exp, neg, scale } from "../../ops/unary.ts";
import { clamp, maximum, minimum, step } from "../_piecewise.ts";
import { LOSS_AGG_DEFAULTS, maskedMean, maskedRowMean } from "../loss_agg.ts";
import type { Args } from "../../util/registry.ts";
import {
  aggregate,
  clipBounds,
  clippedByPpo,
  input,
  type PolicyLossFn,
  type PolicyLossInputs,
} from "./policy_loss_fn.ts";

/** The importance ratio `exp(clamp(logp - oldLogp, -20, 20))` [B, T] and its log. */
export function importanceRatio(
  logp: Tensor,
  oldLogp: Tensor,
): { logRatio: Tensor; ratio: Tensor } {
  const logRatio = clamp(sub(logp, oldLogp), -20, 20);
  return { logRatio, ratio: exp(logRatio) };
}

function ppoLoss(inputs: PolicyLossInputs, args: Args) {
  const fn = "ppo";
  const oldLogp = input(fn, inputs, "oldLogp");
  const advantages = input(fn, inputs, "advantages");
  const [lo, hi] = clipBounds(fn, args);
  const c = args.clip_ratio_c as number;
  if (!(c > 1)) {
    throw new Error(
      `Cannot configure policy loss fn "ppo": key "clip_ratio_c" expected a number > 1, received ${c}`,
    );
  }
  const { mask, logp } = inputs;
  const behaviour = args.fallback_to_policy_gradient ? stopGradient(logp) : oldLogp;
  const { logRatio, ratio } = importanceRatio(logp, behaviour);
  const negAdv = neg(advantages);
  const clipped = maximum(mul(negAdv, ratio), mul(negAdv, clamp(ratio, lo, hi)));
  // Dual clip: min(clipped, -A * c) where A < 0 (isNegative is exactly 0 or 1).
  const isNegative = step(negAdv);
  let perToken = add(
    mul(isNegative, minimum(clipped, scale(negAdv, c))),
    mul(affine(isNegative, -1, 1), clipped),
  );
  const sequenceMetrics: Record<string, Tensor> = {};
  if (args.enable_sequence_masking) {
    const sequenceKl = maskedRowMean(neg(logRatio), mask); // [B, 1]
    const dropped = mul(
      isNegative,
      step(affine(sequenceKl, 1, -(args.delta_sequence_masking as number))),
    );
    perToken = mul(perToken, affine(dropped, -1, 1));
    sequenceMetrics["seq_mask/masked_tokens"] = maskedMean(dropped, mask);
  }
  const loss = aggregate(fn, args, perToken, mask);
  return {
    loss,
    metrics: {
      ...sequenceMetrics,
      pg_loss: loss,
      pg_clipfrac: maskedMean(clippedByPpo(ratio, advantages, lo, hi), mask),
      // Dual clip binds where A < 0 and r > c.
      pg_clipfrac_lower: maskedMean(mul(step(affine(ratio, 1, -c)), isNegative), mask),
      ppo_kl: maskedMean(neg(logRatio), mask),
      ratio_mean: maskedMean(ratio, mask),
    },
  };
}

/** PPO's clipped surrogate with clip-higher and dual-clip. */
export const ppoPolicyLoss: PolicyLossFn = {
  defaultArgs: {
    clip_range: 0.2,
    clip_range_low: null,
    clip_range_high: null,
    clip_ratio_c: 3.0,
    ...LOSS_AGG_DEFAULTS,
    enable_sequence_masking: false,
    delta_sequence_masking: 0.1,
    fallback_to_policy_gradient: false,
  },
  needs: ["oldLogp", "advantages"],
  microBatching: "tokens",
  build: ppoLoss,
};
