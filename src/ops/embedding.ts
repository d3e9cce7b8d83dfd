/**
 * Embedding lookup: `embedding(table [V, D], ids [...])` gathers table rows into [..., D] (token
 * embeddings, and GPT-2's learned position embeddings with ids 0..T-1). Its backward scatter-adds
 * the output gradient into a [V, D] table gradient (duplicate ids accumulate, in token order, so
 * the result is deterministic); ids get none. Ids are not checked on the host: an id >= V (or a
 * negative i32) gives a zero row and drops its gradient, and is never read out of bounds. A table
 * may be a row shard of a larger one: with `first`, id i picks row i - first.
 * Shader: shaders/embedding.wgsl
 * Reference: src/reference/embedding.ts
 * Test: tests/ops/embedding_test.ts
 */

import { grid1d } from "../gpu/dispatch.ts";
import { packParams } from "../gpu/kernel_params.ts";
import type { BoundTensor, KernelLaunch, OpDef } from "../graph/op.ts";
import { formatShape, sameShape, type Tensor } from "../graph/tensor.ts";
import { embeddingRef } from "../reference/embedding.ts";

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
): KernelLaunch {
  return {
    spec: {
      shader: "embedding",
      entryPoint,
      constants: entryPoint === "backward" ? { WG, COLS: BACKWARD_COLS } : { WG },
      bindings: ["read", "read", "read_write"],
      params: true,
    },
    buffers: [src.buffer, ids.buffer, out.buffer],
    params: packParams({ tokens: ids.tensor.size, vocab, dim, first }),
    workgroups: grid1d(Math.ceil(invocations / WG)),
  };
}

/** Scatter-add of the output gradient g [..., D] into a table gradient [vocab, D]. */
const EMBEDDING_BACKWARD: OpDef<{ vocab: number; first: number }> = {
  name: "embedding_backward",
  output([g, ids], { vocab }) {
    checkIds("embedding_backward", ids);
    if (g.dtype !== "f32" || !sameShape(g.shape.slice(0, -1), ids.shape) || g.rank === 0) {
      throw new Error(
        `Cannot apply "embedding_backward" to ${g}: expected an f32 gradient of shape ${
          formatShape(ids.shape)
        } + [dim] for ids ${ids}`,
      );
    }
    return { shape: [vocab, g.lastDim], dtype: "f32" };
  },
  launch(_ctx, inputs, out, { vocab, first }) {
    const dim = inputs[0].tensor.lastDim;
    const invocations = inputs[1].tensor.size * Math.ceil(dim / BACKWARD_COLS);
    const launch = embeddingLaunch("backward", inputs, out, { vocab, dim, first }, invocations);
    // Rows of ids that no token holds stay zero.
    const clear = (encoder: GPUCommandEncoder) =>
      encoder.clearBuffer(out.buffer, 0, out.tensor.size * 4);
    return [{ ...launch, before: clear }];
  },
};

const EMBEDDING: OpDef<{ first: number }> = {
  name: "embedding",
  output([table, ids]) {
    if (table.dtype !== "f32" || table.rank !== 2) {
      throw new Error(
        `Cannot apply "embedding" to ${table}: expected an f32 table of shape [vocab, dim]`,
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
