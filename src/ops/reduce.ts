/**
 * Reductions over the last axis (sum, mean, max) and their backward: any tensor is read as
 * [rows, cols] with cols its last dimension, and one workgroup handles one row. Results keep the last axis as 1 ([..., 1]) unless asked
 * not to. f32 only; other axes are not supported (reshape or transpose first).
 * Shader: shaders/reduce.wgsl
 * Reference: src/reference/reduce.ts
 * Test: tests/ops/reduce_test.ts
 */

import type { OpDef } from "../graph/op.ts";
import { checkLastAxisInput, rowLaunch } from "./row_launch.ts";
import { formatShape, sameShape, type Tensor } from "../graph/tensor.ts";
import { expandTo } from "./broadcast.ts";
import { reshape } from "./reshape.ts";
import { scale } from "./unary.ts";
import { reduceLastRef } from "../reference/reduce.ts";

/** Shape of a last-axis reduction of `shape` with the axis kept: [..., 1]. */
function keptShape(shape: readonly number[]): number[] {
  return [...shape.slice(0, -1), 1];
}

/** The last-axis reductions, in the order of the shader's `OP` codes. */
export const REDUCE_OPS = ["sum", "mean", "max"] as const;
/** One of {@link REDUCE_OPS}. */
export type ReduceKind = typeof REDUCE_OPS[number];

/** Gradient of `max` over the last axis: g goes to the first argmax of each row, 0 elsewhere. */
const MAX_BACKWARD: OpDef<null> = {
  name: "max_last_backward",
  output([x, g]) {
    checkLastAxisInput("max_last_backward", x);
    if (g.dtype !== "f32" || !sameShape(g.shape, keptShape(x.shape))) {
      throw new Error(
        `Cannot apply "max_last_backward" to ${x}: expected an f32 gradient of shape ${
          formatShape(keptShape(x.shape))
        }, received ${g}`,
      );
    }
    return { shape: x.shape, dtype: "f32" };
  },
  launch(ctx, [x, g], out) {
    return [
      rowLaunch(ctx.gpu, "reduce", "max_backward", {}, x.tensor, [x.buffer, g.buffer, out.buffer]),
    ];
  },
};

/** The forward op of reduction `kind`, named e.g. `sum_last`. */
function reduceOp(kind: ReduceKind): OpDef<null> {
  const name = `${kind}_last`;
  return {
    name,
    output([x]) {
      checkLastAxisInput(name, x);
      return { shape: keptShape(x.shape), dtype: "f32" };
    },
    launch(ctx, [x], out) {
      const constants = { OP: REDUCE_OPS.indexOf(kind) };
      return [
        rowLaunch(ctx.gpu, "reduce", "forward", constants, x.tensor, [
          x.buffer,
          x.buffer,
          out.buffer,
        ]),
      ];
    },
    reference: ([x], [xt]) => reduceLastRef(kind, x, xt.lastDim),
    backward(grad, [x]) {
      switch (kind) {
        case "sum":
          return [expandTo(grad, x.shape)];
        case "mean":
          return [expandTo(scale(grad, 1 / x.lastDim), x.shape)];
        case "max":
          return [x.graph.apply(MAX_BACKWARD, [x, grad], null)];
      }
    },
  };
}

const OPS: Record<ReduceKind, OpDef<null>> = {
  sum: reduceOp("sum"),
  mean: reduceOp("mean"),
  max: reduceOp("max"),
};

/** Options of the last-axis reductions. */
export interface ReduceOptions {
  /** Keep the reduced axis as a trailing 1, [..., 1] (default true); false drops it: [...]. */
  keepDim?: boolean;
}

/**
 * Reduces `x` over its last axis with `kind`. The result has shape [..., 1], or [...] with
 * `keepDim: false` (a reshape view, no copy; a rank-1 input then gives a scalar of shape []).
 */
export function reduceLast(
  kind: ReduceKind,
  x: Tensor,
  { keepDim = true }: ReduceOptions = {},
): Tensor {
  const y = x.graph.apply(OPS[kind], [x], null);
  return keepDim ? y : reshape(y, x.shape.slice(0, -1));
}

/** Sum over the last axis: [..., C] -> [..., 1] (or [...] with `keepDim: false`). */
export const sumLast = (x: Tensor, options?: ReduceOptions): Tensor =>
  reduceLast("sum", x, options);
/** Mean over the last axis: [..., C] -> [..., 1] (or [...] with `keepDim: false`). */
export const meanLast = (x: Tensor, options?: ReduceOptions): Tensor =>
  reduceLast("mean", x, options);
/**
 * Max over the last axis: [..., C] -> [..., 1] (or [...] with `keepDim: false`). Its gradient
 * goes to the first (lowest-index) maximum of each row only, when a row has ties.
 */
export const maxLast = (x: Tensor, options?: ReduceOptions): Tensor =>
  reduceLast("max", x, options);
