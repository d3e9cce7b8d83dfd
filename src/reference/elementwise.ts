/**
 * Plain-loop CPU references (f64) of the element-wise ops: unary functions, gated activations,
 * broadcasting binary ops, `sumTo` and `expandTo`. Tests compare the GPU kernels against these.
 */

import { broadcastLayout, broadcastShape } from "../ops/broadcast.ts";
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

/** Binary op with broadcasting; returns the values and the output shape. */
export function binaryRef(
  kind: BinaryKind,
  a: ArrayLike<number>,
  aShape: readonly number[],
  b: ArrayLike<number>,
  bShape: readonly number[],
): { data: Float64Array; shape: number[] } {
  const shape = broadcastShape(aShape, bShape);
  const la = broadcastLayout(aShape, shape);
  const lb = broadcastLayout(bShape, shape);
  const data = new Float64Array(shapeSize(shape));
  for (let i = 0; i < data.length; i++) {
    const x = a[Math.floor(i / la.inner) % la.n];
    const y = b[Math.floor(i / lb.inner) % lb.n];
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
  const { n, inner } = broadcastLayout(to, from);
  const out = new Float64Array(n);
  for (let i = 0; i < x.length; i++) out[Math.floor(i / inner) % n] += x[i];
  return out;
}

/** Broadcasts `x` (shape `from`) to `to`. */
export function expandToRef(
  x: ArrayLike<number>,
  from: readonly number[],
  to: readonly number[],
): Float64Array {
  const { n, inner } = broadcastLayout(from, to);
  return Float64Array.from({ length: shapeSize(to) }, (_, i) => x[Math.floor(i / inner) % n]);
}
