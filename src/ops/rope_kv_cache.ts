/**
 * `ropeKvCache`: the step between the q, k, v products and cached attention as one dispatch
 * (`shaders/rope_kv_cache.wgsl`) instead of three: the queries rotated by RoPE, the keys rotated
 * and written into their cache, the values written into theirs. Its op outputs the rotated
 * queries and updates both caches in place (`OpDef.writes`); the updated caches come out as
 * views that depend on it, so the attention after it reads them written. Head dims that are
 * multiples of 8 (every model rft loads); `rope` and `writeKvCache` do the same in three
 * dispatches for any even head dim. Not differentiable.
 * Shader: shaders/rope_kv_cache.wgsl
 * Reference: src/reference/rope.ts, src/reference/kv_cache.ts
 * Test: tests/ops/rope_kv_cache_test.ts
 */

import { grid1d } from "../gpu/dispatch.ts";
import { packParams } from "../gpu/kernel_params.ts";
import type { OpDef } from "../graph/op.ts";
import { sameShape, type Tensor } from "../graph/tensor.ts";
import { ropeRef } from "../reference/rope.ts";
import { checkPositions } from "./kv_cache.ts";
import { checkInvFreq, invFreqBuffer, type RopeAttrs } from "./rope.ts";

/**
 * Threads per workgroup: 64, so that a decode step's few tokens still spread over the threads of
 * a CPU adapter (one workgroup per thread at a time).
 */
const WG = 64;

/**
 * Whether {@link ropeKvCache} takes heads of `headDim` elements: multiples of 8, so that each
 * rotated half splits into quads.
 */
export function ropeKvCacheTakes(headDim: number): boolean {
  return headDim % 8 === 0;
}

/** Throws unless `t` is an f32 tensor [slots, tokens, heads, headDim] of `role` for `anchor`. */
function checkRows(anchor: Tensor, role: string, t: Tensor, shape: readonly number[]): void {
  if (t.dtype !== "f32" || !sameShape(t.shape, shape)) {
    throw new Error(
      `Cannot apply "rope_kv_cache" to ${anchor}: expected f32 ${role} of shape [${shape}], received ${t}`,
    );
  }
}

/** Inputs: q, k, v, the key cache, the value cache, positions; output: q rotated. */
const ROPE_KV_CACHE: OpDef<RopeAttrs> = {
  name: "rope_kv_cache",
  writes: [3, 4],
  output([q, k, v, keys, values, positions]) {
    if (q.dtype !== "f32" || q.rank !== 4 || !ropeKvCacheTakes(q.lastDim)) {
      throw new Error(
        `Cannot apply "rope_kv_cache" to ${q}: expected f32 queries [slots, tokens, heads, head_dim] with head_dim a multiple of 8`,
      );
    }
    const [slots, tokens, heads, headDim] = q.shape;
    checkRows(q, "keys", k, [slots, tokens, k.shape[2], headDim]);
    const kvHeads = k.shape[2];
    if (heads % kvHeads !== 0) {
      throw new Error(
        `Cannot apply "rope_kv_cache" to ${q}: ${heads} query heads do not share ${kvHeads} kv heads evenly`,
      );
    }
    checkRows(q, "values", v, k.shape);
    checkRows(q, "key cache", keys, [slots, keys.shape[1], kvHeads, headDim]);
    checkRows(q, "value cache", values, keys.shape);
    checkPositions("rope_kv_cache", q, positions, slots, tokens);
    return { shape: q.shape, dtype: "f32" };
  },
  launch(ctx, [q, k, v, keys, values, positions], out, { invFreq }) {
    const [slots, tokens, heads, headDim] = q.tensor.shape;
    const invocations = slots * tokens * headDim / 8;
    return [{
      spec: {
        shader: "rope_kv_cache",
        entryPoint: "main",
        constants: { WG },
        bindings: [
          "read",
          "read",
          "read",
          "read",
          "read",
          "read_write",
          "read_write",
          "read_write",
        ],
        params: true,
      },
      buffers: [
        q.buffer,
        k.buffer,
        v.buffer,
        positions.buffer,
        invFreqBuffer(ctx, invFreq, "rope_kv_cache_inv_freq"),
        out.buffer,
        keys.buffer,
        values.buffer,
      ],
      params: packParams({
        tokens: slots * tokens,
        tn: tokens,
        tmax: keys.tensor.shape[1],
        heads,
        kv_heads: k.tensor.shape[2],
        quads: headDim / 8,
      }),
      workgroups: grid1d(Math.ceil(invocations / WG)),
    }];
  },
  reference: ([q, , , , , positions], [qt], { invFreq }) =>
    ropeRef(q, positions, qt.shape[2], qt.lastDim, invFreq),
};

/** A cache after the `rope_kv_cache` op that wrote it: inputs the cache and that op's output. */
const WRITTEN_CACHE: OpDef<null> = {
  name: "written_cache",
  aliasOf: 0,
  output([cache]) {
    return { shape: cache.shape, dtype: cache.dtype };
  },
  launch() {
    return [];
  },
};

/** The rotated queries and the caches with the new keys and values, from {@link ropeKvCache}. */
export interface RopeKvCacheResult {
  queries: Tensor;
  keys: Tensor;
  values: Tensor;
}

/**
 * Queries `q` [slots, tokens, heads, head_dim] rotated as `rope(q, positions, invFreq)`, keys `k`
 * and values `v` [slots, tokens, kv_heads, head_dim] written into the caches `keys` and `values`
 * [slots, max_len, kv_heads, head_dim] (variables or graph inputs) as `writeKvCache(keys, k,
 * positions, { invFreq })` and `writeKvCache(values, v, positions)` write them, in one
 * dispatch. `positions` [slots, tokens] (i32); a position outside the cache (negative: padding)
 * writes nothing. head_dim must be a multiple of 8. Read the caches through the result's `keys`
 * and `values`, and pass those to the next write.
 */
export function ropeKvCache(
  q: Tensor,
  k: Tensor,
  v: Tensor,
  keys: Tensor,
  values: Tensor,
  positions: Tensor,
  invFreq: Float32Array<ArrayBuffer>,
): RopeKvCacheResult {
  checkInvFreq("rope_kv_cache", q, invFreq, q.lastDim);
  const g = q.graph;
  const queries = g.apply(ROPE_KV_CACHE, [q, k, v, keys, values, positions], { invFreq });
  return {
    queries,
    keys: g.apply(WRITTEN_CACHE, [keys, queries], null),
    values: g.apply(WRITTEN_CACHE, [values, queries], null),
  };
}
