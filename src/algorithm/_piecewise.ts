/**
 * Piecewise functions the losses need, composed from existing graph ops (the op set has no
 * min/max/clamp/compare): clamp, minimum, maximum, abs and a step from `relu`, and a stable
 * `-log(sigmoid(z))`. Each is written so that the side that binds is exact (no cancellation of
 * large values); gradients follow from the ops (0 at a kink, like relu's).
 */

import type { Tensor } from "../graph/tensor.ts";
import { add, mul, sub } from "../ops/binary.ts";
import { affine, log, neg, relu, sigmoid } from "../ops/unary.ts";

/**
 * `x` clamped to [lo, hi], as `min(max(x, lo), hi)` below: exactly a bound where it binds, and
 * within rounding of x elsewhere, however large x is.
 */
export function clamp(x: Tensor, lo: number, hi: number): Tensor {
  const atLeastLo = affine(relu(affine(x, 1, -lo)), 1, lo);
  return affine(relu(affine(atLeastLo, -1, hi)), -1, hi);
}

/**
 * Element-wise `max(a, b)` (broadcasting) as `b + relu(a - b)`: exactly `b` where b is larger.
 * Pass the bound (the moderate value) as `b`: where a wins, the result carries the rounding of
 * `a - b`, which is large relative to a if |b| >> |a|.
 */
export function maximum(a: Tensor, b: Tensor): Tensor {
  return add(b, relu(sub(a, b)));
}

/** Element-wise `min(a, b)` (broadcasting) as `b - relu(b - a)`; pass the bound as `b`. */
export function minimum(a: Tensor, b: Tensor): Tensor {
  return sub(b, relu(sub(b, a)));
}

/** `|x|`: `relu(x) + relu(-x)`. */
export function abs(x: Tensor): Tensor {
  return add(relu(x), relu(neg(x)));
}

/**
 * Scale that lifts positive values >= 2^-64 to >= 1 without overflowing f32 for values below
 * 2^64 (WGSL leaves overflow undefined).
 */
const STEP_SCALE = 2 ** 64;

/**
 * 1 where `x > 0`, else 0: `1 - relu(1 - 2^64 * relu(x))`. For indicators (clip fractions,
 * sign masks) of values that need no gradient; exact for 0 and for x in [2^-64, 2^64).
 */
export function step(x: Tensor): Tensor {
  return affine(relu(affine(relu(x), -STEP_SCALE, 1)), -1, 1);
}

/** Below this, `-log(sigmoid(z))` is continued by its asymptote `-z` (sigmoid underflows). */
const LOG_SIGMOID_FLOOR = -30;

/**
 * `-log(sigmoid(z))` (softplus of -z) without overflow: `-log(sigmoid(max(z, -30)))` plus
 * `relu(-30 - z)`, whose sum differs from the exact value by < 1e-13 below -30. Its gradient
 * is `sigmoid(z) - 1` (including at z = 0, where a relu/abs form would give 0).
 */
export function negLogSigmoid(z: Tensor): Tensor {
  const floored = affine(relu(affine(z, 1, -LOG_SIGMOID_FLOOR)), 1, LOG_SIGMOID_FLOOR);
  return add(neg(log(sigmoid(floored))), relu(affine(z, -1, LOG_SIGMOID_FLOOR)));
}

/** 1 where `x >= c`, else 0 (`1 - step(c - x)`); for indicators, like {@link step}. */
export function atLeast(x: Tensor, c: number): Tensor {
  return affine(step(affine(x, -1, c)), -1, 1);
}

/** 1 where `x <= c`, else 0 (`1 - step(x - c)`); for indicators, like {@link step}. */
export function atMost(x: Tensor, c: number): Tensor {
  return affine(step(affine(x, 1, -c)), -1, 1);
}

/** Logical or of 0/1 indicators `a` and `b` (broadcasting): `a + b - a * b`. */
export function either(a: Tensor, b: Tensor): Tensor {
  return sub(add(a, b), mul(a, b));
}
