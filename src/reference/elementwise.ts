/**
 * Plain-loop CPU references (f64) of the element-wise ops: unary functions, gated activations,
 * broadcasting binary ops, `sumTo` and `expandTo`. Tests compare the GPU kernels against these.
 * Broadcasting is numpy's, indexed here element by element through each dimension, independently
 * of the ops' own (outer, n, inner) layout, so a layout bug cannot hide from its check.
 */

import type { BinaryKind } from "../ops/binary.ts";
import type { UnaryKind } from "../ops/unary.ts";
import { shapeSize } from "../graph/tensor.ts";

const GELU_C = Math.sqrt(2 / Math.PI);

/** f(x) for unary op `kind` (alpha, beta for affine). */
export function unaryScalar(kind: UnaryKind, x: number, alpha = 1, beta = 0): number {
  switch (kind) {
    case "affine":
      return alpha * x + beta;
    case "exp":
      return Math.exp(x);
    case "log":
      return Math.log(x);
    case "sqrt":
      return Math.sqrt(x);
    case "relu":
      return Math.max(x, 0);
    case "gelu":
      return 0.5 * x * (1 + Math.tanh(GELU_C * (x + 0.044715 * x ** 3)));
    case "silu":
      return x / (1 + Math.exp(-x));
    case "sigmoid":
      return 1 / (1 + Math.exp(-x));
    case "tanh":
      return Math.tanh(x);
    case "square":
      return x * x;
  }
}

/** Unary op over an array. */
export function unaryRef(
  kind: UnaryKind,
  x: ArrayLike<number>,
  alpha = 1,
  beta = 0,
): Float64Array {
  return Float64Array.from({ length: x.length }, (_, i) => unaryScalar(kind, x[i], alpha, beta));
}

/** `f(gate) * up` element-wise, `f` the unary function `kind` (the gated ops of `gated.ts`). */
export function gatedRef(
  kind: UnaryKind,
  gate: ArrayLike<number>,
  up: ArrayLike<number>,
): Float64Array {
  return Float64Array.from({ length: gate.length }, (_, i) => unaryScalar(kind, gate[i]) * up[i]);
}

/** The shape numpy broadcasts `a` and `b` to; throws when a dimension pair is neither equal nor 1. */
function numpyShape(a: readonly number[], b: readonly number[]): number[] {
  const rank = Math.max(a.length, b.length);
  const padded = (s: readonly number[]) => [...Array(rank - s.length).fill(1), ...s];
  const [pa, pb] = [padded(a), padded(b)];
  return pa.map((da, d) => {
    if (da !== pb[d] && da !== 1 && pb[d] !== 1) {
      throw new Error(`Cannot broadcast [${a}] with [${b}]: dimension ${d} is ${da} and ${pb[d]}`);
    }
    return Math.max(da, pb[d]);
  });
}

/**
 * The flat index in an array of shape `shape` that element `i` of an array of shape `out` reads
 * when `shape` is broadcast to `out` (right-aligned; a dimension of 1 repeats).
 */
function broadcastIndex(i: number, out: readonly number[], shape: readonly number[]): number {
  let index = 0;
  let stride = 1;
  let rest = i;
  for (let d = out.length - 1; d >= 0; d--) {
    const coordinate = rest % out[d];
    rest = Math.floor(rest / out[d]);
    const dim = shape[d - (out.length - shape.length)] ?? 1;
    if (dim !== 1) index += coordinate * stride;
    stride *= dim;
  }
  return index;
}

/** Binary op with broadcasting; returns the values and the output shape. */
export function binaryRef(
  kind: BinaryKind,
  a: ArrayLike<number>,
  aShape: readonly number[],
  b: ArrayLike<number>,
  bShape: readonly number[],
): { data: Float64Array; shape: number[] } {
  const shape = numpyShape(aShape, bShape);
  const data = new Float64Array(shapeSize(shape));
  for (let i = 0; i < data.length; i++) {
    const x = a[broadcastIndex(i, shape, aShape)];
    const y = b[broadcastIndex(i, shape, bShape)];
    data[i] = kind === "add" ? x + y : kind === "sub" ? x - y : kind === "mul" ? x * y : x / y;
  }
  return { data, shape };
}

/** Sums `x` (shape `from`) down to the broadcast-compatible shape `to`. */
export function sumToRef(
  x: ArrayLike<number>,
  from: readonly number[],
  to: readonly number[],
): Float64Array {
  const out = new Float64Array(shapeSize(to));
  for (let i = 0; i < x.length; i++) out[broadcastIndex(i, from, to)] += x[i];
  return out;
}

/** Broadcasts `x` (shape `from`) to `to`. */
export function expandToRef(
  x: ArrayLike<number>,
  from: readonly number[],
  to: readonly number[],
): Float64Array {
  return Float64Array.from({ length: shapeSize(to) }, (_, i) => x[broadcastIndex(i, to, from)]);
}
