/**
 * `ropeKvCache`: the step between the q, k, v products and cached attention as one dispatch
 * (`shaders/rope_kv_cache.wgsl`) instead of three: the queries rotated by RoPE, the keys rotated
 * and written into their cache, the values written into theirs. Its op outputs the rotated
 * queries and updates both caches in place (`OpDef.writes`); the updated caches come out as
 * views that depend on it, so the attention after it reads them written. `packedRopeKvCache`
 * takes q, k and v as one tensor, each token's side by side (as `normedQkvGemv` or a fused qkv
 * module gives them), with no slices between. Head dims that are multiples of 8 (every model rft
 * loads); `rope` and `writeKvCache` do the same in three dispatches for any even head dim. Not
 * differentiable.
 * Shader: shaders/rope_kv_cache.wgsl
 * Reference: src/reference/rope.ts, src/reference/kv_cache.ts
 * Test: tests/ops/rope_kv_cache_test.ts
 */

import { grid1d } from "../gpu/dispatch.ts";
import { packParams } from "../gpu/kernel_params.ts";
import type { BoundTensor, KernelLaunch, LaunchContext, OpDef } from "../graph/op.ts";
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

/** Throws unless `t` is an f32 tensor of `shape`, `role` of op `op` for `anchor`. */
function checkRows(op: string, anchor: Tensor, role: string, t: Tensor, shape: readonly number[]) {
  if (t.dtype !== "f32" || !sameShape(t.shape, shape)) {
    throw new Error(
      `Cannot apply "${op}" to ${anchor}: expected f32 ${role} of shape [${shape}], received ${t}`,
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
    checkRows("rope_kv_cache", q, "keys", k, [slots, tokens, k.shape[2], headDim]);
    const kvHeads = k.shape[2];
    if (heads % kvHeads !== 0) {
      throw new Error(
        `Cannot apply "rope_kv_cache" to ${q}: ${heads} query heads do not share ${kvHeads} kv heads evenly`,
      );
    }
    checkRows("rope_kv_cache", q, "values", v, k.shape);
    checkRows("rope_kv_cache", q, "key cache", keys, [slots, keys.shape[1], kvHeads, headDim]);
    checkRows("rope_kv_cache", q, "value cache", values, keys.shape);
    checkPositions("rope_kv_cache", q, positions, slots, tokens);
    return { shape: q.shape, dtype: "f32" };
  },
  launch(ctx, [q, k, v, keys, values, positions], out, { invFreq }) {
    const [, , heads, headDim] = q.tensor.shape;
    const kvHeads = k.tensor.shape[2];
    const quads = headDim / 4;
    const layout = { q: heads * quads, kv: kvHeads * quads, kAt: 0, vAt: 0 };
    return ropeKvCacheLaunch(ctx, [q, k, v, keys, values, positions], out, layout, invFreq);
  },
  reference: ([q, , , , , positions], [qt], { invFreq }) =>
    ropeRef(q, positions, qt.shape[2], qt.lastDim, invFreq),
};

/** Where each token's q, k and v lie in the op's inputs, in vec4s: rows and offsets. */
interface QkvLayout {
  /** From one token's queries to the next's. */
  q: number;
  /** From one token's keys (values) to the next's. */
  kv: number;
  /** A token's first key in k, its first value in v. */
  kAt: number;
  vAt: number;
}

/**
 * The launch of `shaders/rope_kv_cache.wgsl` reading q, k and v as `layout` says and writing
 * the rotated queries into `out` ([slots, tokens, heads, headDim]) and the caches.
 */
function ropeKvCacheLaunch(
  ctx: LaunchContext,
  [q, k, v, keys, values, positions]: readonly BoundTensor[],
  out: BoundTensor,
  layout: QkvLayout,
  invFreq: Float32Array<ArrayBuffer>,
): KernelLaunch[] {
  const [slots, tokens, heads, headDim] = out.tensor.shape;
  const invocations = slots * tokens * headDim / 8;
  const buffers = [q, k, v, positions].map((t) => t.buffer);
  return [{
    spec: {
      shader: "rope_kv_cache",
      entryPoint: "main",
      constants: { WG },
      bindings: ["read", "read", "read", "read", "read", "read_write", "read_write", "read_write"],
      params: true,
    },
    buffers: [
      ...buffers,
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
      kv_heads: keys.tensor.shape[2],
      quads: headDim / 8,
      q_row: layout.q,
      kv_row: layout.kv,
      k_at: layout.kAt,
      v_at: layout.vAt,
    }),
    workgroups: grid1d(Math.ceil(invocations / WG)),
  }];
}

/** Query heads of a packed [slots, tokens, (heads + 2 kvHeads) headDim] tensor by its caches. */
function packedHeads(qkv: Tensor, keys: Tensor): number {
  return qkv.lastDim / keys.lastDim - 2 * keys.shape[2];
}

/** Inputs: q, k and v side by side [slots, tokens, (H + 2 Hkv) D], the caches, positions. */
const PACKED_ROPE_KV_CACHE: OpDef<RopeAttrs> = {
  name: "packed_rope_kv_cache",
  writes: [1, 2],
  output([qkv, keys, values, positions]) {
    const [slots, tokens] = qkv.shape;
    const [kvHeads, headDim] = keys.shape.slice(2);
    const heads = packedHeads(qkv, keys);
    const fits = qkv.rank === 3 && keys.rank === 4 && Number.isInteger(heads) && heads > 0 &&
      heads % kvHeads === 0;
    if (qkv.dtype !== "f32" || !fits || !ropeKvCacheTakes(headDim)) {
      throw new Error(
        `Cannot apply "packed_rope_kv_cache" to ${qkv} and the key cache ${keys}: expected f32 [slots, tokens, (heads + 2 kv_heads) * head_dim], heads a multiple of kv_heads, head_dim a multiple of 8`,
      );
    }
    checkRows("packed_rope_kv_cache", qkv, "key cache", keys, [
      slots,
      keys.shape[1],
      kvHeads,
      headDim,
    ]);
    checkRows("packed_rope_kv_cache", qkv, "value cache", values, keys.shape);
    checkPositions("packed_rope_kv_cache", qkv, positions, slots, tokens);
    return { shape: [slots, tokens, heads, headDim], dtype: "f32" };
  },
  launch(ctx, [qkv, keys, values, positions], out, { invFreq }) {
    const [kvHeads, headDim] = keys.tensor.shape.slice(2);
    const heads = out.tensor.shape[2];
    const quads = headDim / 4;
    const layout = {
      q: qkv.tensor.lastDim / 4,
      kv: qkv.tensor.lastDim / 4,
      kAt: heads * quads,
      vAt: (heads + kvHeads) * quads,
    };
    const inputs = [qkv, qkv, qkv, keys, values, positions];
    return ropeKvCacheLaunch(ctx, inputs, out, layout, invFreq);
  },
  reference: ([qkv, , , positions], [qkvT, keys], { invFreq }) => {
    const headDim = keys.lastDim;
    const heads = packedHeads(qkvT, keys);
    const width = qkvT.lastDim;
    const rows = qkv.length / width;
    const q = new Float64Array(rows * heads * headDim);
    for (let r = 0; r < rows; r++) {
      q.set(qkv.subarray(r * width, r * width + heads * headDim), r * heads * headDim);
    }
    return ropeRef(q, positions, heads, headDim, invFreq);
  },
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
  const queries = q.graph.apply(ROPE_KV_CACHE, [q, k, v, keys, values, positions], { invFreq });
  return writtenCaches(queries, keys, values);
}

/**
 * {@link ropeKvCache} of q, k and v given side by side in `qkv` [slots, tokens, (heads + 2
 * kv_heads) * head_dim] (each token's q, then k, then v; the head counts from the caches): the
 * same rotated queries [slots, tokens, heads, head_dim] and cache writes, in one dispatch.
 */
export function packedRopeKvCache(
  qkv: Tensor,
  keys: Tensor,
  values: Tensor,
  positions: Tensor,
  invFreq: Float32Array<ArrayBuffer>,
): RopeKvCacheResult {
  checkInvFreq("packed_rope_kv_cache", qkv, invFreq, keys.lastDim);
  const inputs = [qkv, keys, values, positions];
  return writtenCaches(qkv.graph.apply(PACKED_ROPE_KV_CACHE, inputs, { invFreq }), keys, values);
}

/** The rotated queries of a cache-writing op and the caches it wrote, as views after it. */
function writtenCaches(queries: Tensor, keys: Tensor, values: Tensor): RopeKvCacheResult {
  const g = queries.graph;
  return {
    queries,
    keys: g.apply(WRITTEN_CACHE, [keys, queries], null),
    values: g.apply(WRITTEN_CACHE, [values, queries], null),
  };
}
