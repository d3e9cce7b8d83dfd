/**
 * Embedding lookup: `embedding(table [V, D], ids [...])` gathers table rows into [..., D] (token
 * embeddings, and GPT-2's learned position embeddings with ids 0..T-1). Its backward scatter-adds
 * the output gradient into a [V, D] table gradient (duplicate ids accumulate, in token order, so
 * the result is deterministic); ids get none. Ids are not checked on the host: an id >= V (or a
 * negative i32) gives a zero row and drops its gradient, and is never read out of bounds. A table
 * may be a row shard of a larger one: with `first`, id i picks row i - first. A frozen table may
 * be bf16 or f16 (read as f32).
 * Shader: shaders/embedding.wgsl
 * Reference: src/reference/embedding.ts
 * Test: tests/ops/embedding_test.ts
 */

import { grid1d } from "../gpu/dispatch.ts";
import { packParams } from "../gpu/kernel_params.ts";
import type { BoundTensor, KernelLaunch, OpDef } from "../graph/op.ts";
import { formatShape, isHalf, sameShape, type Tensor } from "../graph/tensor.ts";
import { embeddingRef } from "../reference/embedding.ts";
import { weightFormatCode } from "./weight_format.ts";

const WG = 256;
/** Columns of the table gradient one backward invocation writes (`COLS` in the shader). */
const BACKWARD_COLS = 32;

/** Throws unless `ids` holds integers (i32 or u32), naming op `op`. */
function checkIds(op: string, ids: Tensor): void {
  if (ids.dtype !== "i32" && ids.dtype !== "u32") {
    throw new Error(`Cannot apply "${op}" to ids ${ids}: expected i32 or u32 ids`);
  }
}

/**
 * A launch of `shaders/embedding.wgsl` over `invocations` invocations: bindings (src, ids, out),
 * params (tokens, vocab, dim, first).
 */
function embeddingLaunch(
  entryPoint: "forward" | "backward",
  [src, ids]: readonly BoundTensor[],
  out: BoundTensor,
  { vocab, dim, first }: { vocab: number; dim: number; first: number },
  invocations: number,
  accumulate = false,
): KernelLaunch {
  const backward = { WG, COLS: BACKWARD_COLS, ...(accumulate ? { ACCUMULATE: 1 } : {}) };
  const dtype = src.tensor.dtype;
  const forward = { WG, ...(isHalf(dtype) ? { SRC_FORMAT: weightFormatCode(dtype) } : {}) };
  return {
    spec: {
      shader: "embedding",
      entryPoint,
      constants: entryPoint === "backward" ? backward : forward,
      bindings: ["read", "read", "read_write"],
      params: true,
    },
    buffers: [src.buffer, ids.buffer, out.buffer],
    params: packParams({ tokens: ids.tensor.size, vocab, dim, first }),
    workgroups: grid1d(Math.ceil(invocations / WG)),
  };
}

/** Attributes of the backward ops: the table's rows and the shard's first id. */
interface BackwardAttrs {
  vocab: number;
  first: number;
}

/** Throws unless `g` is an f32 gradient of the embedding of `ids`, naming op `op`. */
function checkGradient(op: string, g: Tensor, ids: Tensor): void {
  checkIds(op, ids);
  if (g.dtype !== "f32" || !sameShape(g.shape.slice(0, -1), ids.shape) || g.rank === 0) {
    throw new Error(
      `Cannot apply "${op}" to ${g}: expected an f32 gradient of shape ${
        formatShape(ids.shape)
      } + [dim] for ids ${ids}`,
    );
  }
}

/** The backward launch over every (token, column block) of `g` into `out`. */
function backwardLaunch(
  [g, ids]: readonly BoundTensor[],
  out: BoundTensor,
  { vocab, first }: BackwardAttrs,
  accumulate: boolean,
): KernelLaunch {
  const dim = g.tensor.lastDim;
  const invocations = ids.tensor.size * Math.ceil(dim / BACKWARD_COLS);
  return embeddingLaunch("backward", [g, ids], out, { vocab, dim, first }, invocations, accumulate);
}

/** Scatter-add of the output gradient g [..., D] into a table gradient [vocab, D]. */
const EMBEDDING_BACKWARD: OpDef<BackwardAttrs> = {
  name: "embedding_backward",
  output([g, ids], { vocab }) {
    checkGradient("embedding_backward", g, ids);
    return { shape: [vocab, g.lastDim], dtype: "f32" };
  },
  launch(_ctx, inputs, out, attrs) {
    // Rows of ids that no token holds stay zero.
    const clear = (encoder: GPUCommandEncoder) =>
      encoder.clearBuffer(out.buffer, 0, out.tensor.size * 4);
    return [{ ...backwardLaunch(inputs, out, attrs, false), before: clear }];
  },
};

/**
 * The same scatter-add into a running sum [vocab, D], in place (e.g. a tied embedding's gradient
 * summed over micro-batches): only the rows of ids the tokens hold are read and written.
 */
const EMBEDDING_BACKWARD_ACCUMULATE: OpDef<BackwardAttrs> = {
  name: "embedding_backward_accumulate",
  inPlace: 0,
  output([acc, g, ids], { vocab }) {
    checkGradient("embedding_backward_accumulate", g, ids);
    if (acc.dtype !== "f32" || !sameShape(acc.shape, [vocab, g.lastDim])) {
      throw new Error(
        `Cannot accumulate the embedding gradient ${g} into ${acc}: expected an f32 sum of shape ${
          formatShape([vocab, g.lastDim])
        }`,
      );
    }
    return { shape: acc.shape, dtype: "f32" };
  },
  launch: (_ctx, [, g, ids], out, attrs) => [backwardLaunch([g, ids], out, attrs, true)],
};

/**
 * `acc += ` the table gradient `t` is, when an embedding's backward made `t`, in one launch that
 * touches only the rows of the ids `t`'s tokens hold; undefined when `t` is something else.
 */
export function accumulateEmbeddingGradient(acc: Tensor, t: Tensor): Tensor | undefined {
  if (t.source.kind !== "op" || t.source.op !== EMBEDDING_BACKWARD) return undefined;
  return acc.graph.apply(
    EMBEDDING_BACKWARD_ACCUMULATE,
    [acc, ...t.source.inputs],
    t.source.attrs as BackwardAttrs,
  );
}

const EMBEDDING: OpDef<{ first: number }> = {
  name: "embedding",
  output([table, ids]) {
    if ((table.dtype !== "f32" && !isHalf(table.dtype)) || table.rank !== 2) {
      throw new Error(
        `Cannot apply "embedding" to ${table}: expected an f32, bf16 or f16 table of shape [vocab, dim]`,
      );
    }
    checkIds("embedding", ids);
    return { shape: [...ids.shape, table.shape[1]], dtype: "f32" };
  },
  launch(_ctx, [table, ids], out, { first }) {
    const [vocab, dim] = table.tensor.shape;
    return [embeddingLaunch("forward", [table, ids], out, { vocab, dim, first }, out.tensor.size)];
  },
  reference: ([table, ids], [tableT], { first }) =>
    embeddingRef(table, tableT.shape[1], ids, first),
  backward(grad, [table, ids], _out, { first }) {
    const vocab = table.shape[0];
    return [grad.graph.apply(EMBEDDING_BACKWARD, [grad, ids], { vocab, first }), null];
  },
};

/**
 * Rows of `table` [V, D] (f32) picked by `ids` [...] (i32 or u32): [..., D], id i picking row
 * i - `first` (`first` > 0: the table is a row shard of a larger one). An id outside
 * [first, first + V) gives a row of zeros and no gradient. Differentiable with respect to `table`.
 */
export function embedding(table: Tensor, ids: Tensor, first = 0): Tensor {
  return table.graph.apply(EMBEDDING, [table, ids], { first });
}
