/**
 * REC's policy loss (Trinity's `rec`, the REINFORCE-with-clipping family of the Trinity team's
 * "group-relative REINFORCE is secretly off-policy" study): `-A' * logp * inRange` per token,
 * with the (detached) importance ratio `r` deciding which tokens count (`clip_mode`):
 * `none` all; `two-side` r in [1 - epsilon_low, 1 + epsilon_high]; `one-side` r <= 1 +
 * epsilon_high where A >= 0, r >= 1 - epsilon_low where A <= 0; `gspo-one-side` the same on the
 * sequence ratio `s = exp(mean log-ratio)`; `ring` two-side, or r <= 1 - epsilon_low_prime where
 * A >= 0, or r >= 1 + epsilon_high_prime where A <= 0. `weight` rescales the advantage: by r
 * (`importance_sampling`), by s (`gspo_importance_sampling`) or by `exp(A / temp)`
 * (`advantage`). `regularizer`: `forward-kl` subtracts `regularizer_coef * logp`, `k2` adds
 * `regularizer_coef * (logp - oldLogp)^2`. Aggregated token-mean (`seq-mean-token-mean` in
 * `gspo-one-side`), as Trinity.
 */

import type { Tensor } from "../../graph/tensor.ts";
import { add, mul, sub } from "../../ops/binary.ts";
import { stopGradient } from "../../ops/stop_gradient.ts";
import { affine, exp, neg, scale, square } from "../../ops/unary.ts";
import { atLeast, atMost, either } from "../_piecewise.ts";
import { aggregateLoss, type LossAggMode, maskedMean, maskedRowMean } from "../loss_agg.ts";
import { type Args, checkChoice } from "../../util/registry.ts";
import { importanceRatio } from "./ppo.ts";
import { input, type PolicyLossFn, type PolicyLossInputs } from "./policy_loss_fn.ts";

const FN = 'policy loss fn "rec"';
const CLIP_MODES = ["none", "one-side", "gspo-one-side", "two-side", "ring"] as const;
const WEIGHTS = ["none", "importance_sampling", "gspo_importance_sampling", "advantage"] as const;
const REGULARIZERS = ["none", "k2", "forward-kl"] as const;

/** The bounds, checked as Trinity asserts them. */
function bounds(args: Args) {
  const [low, high, lowPrime, highPrime] = [
    args.epsilon_low,
    args.epsilon_high,
    args.epsilon_low_prime,
    args.epsilon_high_prime,
  ] as number[];
  const valid = low > 0 && low <= 1 && high > 0 && lowPrime > 0 && lowPrime <= 1 && highPrime > 0;
  if (!valid || !((args.regularizer_coef as number) >= 0) || !((args.temp as number) > 0)) {
    throw new Error(
      `Cannot configure ${FN}: expected 0 < epsilon_low <= 1, epsilon_high > 0, 0 < epsilon_low_prime <= 1, epsilon_high_prime > 0, regularizer_coef >= 0 and temp > 0, received ${
        JSON.stringify(args)
      }`,
    );
  }
  return { low, high, lowPrime, highPrime };
}

/** 1 on the tokens `clip_mode` keeps, from the ratio `r` and the sequence ratio `s`. */
function inRange(mode: string, r: Tensor, s: Tensor, a: Tensor, args: Args): Tensor {
  const { low, high, lowPrime, highPrime } = bounds(args);
  const nonNegative = atLeast(a, 0);
  const nonPositive = atMost(a, 0);
  const inside = (x: Tensor) => mul(atLeast(x, 1 - low), atMost(x, 1 + high));
  const oneSide = (x: Tensor) =>
    either(mul(atMost(x, 1 + high), nonNegative), mul(atLeast(x, 1 - low), nonPositive));
  switch (mode) {
    case "two-side":
      return inside(r);
    case "one-side":
      return oneSide(r);
    case "gspo-one-side":
      return oneSide(s);
    case "ring":
      return either(
        inside(r),
        either(
          mul(nonNegative, atMost(r, 1 - lowPrime)),
          mul(nonPositive, atLeast(r, 1 + highPrime)),
        ),
      );
    default:
      return affine(r, 0, 1);
  }
}

/** The advantage as `weight` rescales it. */
function weighted(weight: string, a: Tensor, r: Tensor, s: Tensor, temp: number): Tensor {
  if (weight === "importance_sampling") return mul(a, r);
  if (weight === "gspo_importance_sampling") return mul(a, s);
  if (weight === "advantage") return mul(a, exp(scale(a, 1 / temp)));
  return a;
}

function recLoss(inputs: PolicyLossInputs, args: Args) {
  const oldLogp = input("rec", inputs, "oldLogp");
  const advantages = input("rec", inputs, "advantages");
  const mode = checkChoice(FN, "clip_mode", args.clip_mode, CLIP_MODES);
  const weight = checkChoice(FN, "weight", args.weight, WEIGHTS);
  const regularizer = checkChoice(FN, "regularizer", args.regularizer, REGULARIZERS);
  const { logp, mask } = inputs;
  const logRatio = sub(logp, oldLogp);
  const r = stopGradient(importanceRatio(logp, oldLogp).ratio);
  const s = stopGradient(exp(maskedRowMean(logRatio, mask))); // [B, 1]
  // Broadcast to [B, T]: in gspo-one-side every factor may be per sequence.
  const keep = mul(inRange(mode, r, s, advantages, args), affine(r, 0, 1));
  const a = weighted(weight, advantages, r, s, args.temp as number);
  let perToken = mul(mul(neg(a), logp), keep);
  const coef = args.regularizer_coef as number;
  if (regularizer === "forward-kl") perToken = sub(perToken, scale(logp, coef));
  if (regularizer === "k2") perToken = add(perToken, scale(square(logRatio), coef));
  const loss = aggregateLoss(perToken, mask, recLossAggMode(args));
  return {
    loss,
    metrics: { pg_loss: loss, pg_clipfrac: maskedMean(affine(keep, -1, 1), mask) },
  };
}

/** How `rec` aggregates: a mean over sequences in `gspo-one-side`, else over tokens. */
function recLossAggMode(args: Args): LossAggMode {
  return args.clip_mode === "gspo-one-side" ? "seq-mean-token-mean" : "token-mean";
}

/** REC's clipped REINFORCE (Trinity's defaults). */
export const recPolicyLoss: PolicyLossFn = {
  defaultArgs: {
    epsilon_low: 0.2,
    epsilon_high: 0.2,
    epsilon_low_prime: 0.6,
    epsilon_high_prime: 2,
    clip_mode: "none",
    weight: "none",
    regularizer: "none",
    regularizer_coef: 0.0,
    temp: 1.0,
  },
  needs: ["oldLogp", "advantages"],
  microBatching: "rows",
  lossAggMode: recLossAggMode,
  build: recLoss,
};
