/**
 * `cachedAttention`: attention of new queries over a KV cache, for KV-cached generation (prefill
 * and token-by-token decode), on `shaders/cached_attention.wgsl`. An online softmax in f32 over
 * the cached keys, parallel over (slot, kv head, query block) and, when that is too little work
 * to fill the device (decode), over key chunks merged by a second pass (flash-decoding). Not
 * differentiable; no segment ids (one sequence per slot) or ALiBi. A sliding window limits the
 * keys a query attends to; the cache still holds every position.
 * Shader: shaders/cached_attention.wgsl
 * Reference: src/reference/kv_cache.ts
 * Test: tests/ops/kv_cache_test.ts
 */

import { grid1d, MAX_WORKGROUPS_PER_DIM } from "../gpu/dispatch.ts";
import { packParams } from "../gpu/kernel_params.ts";
import type { KernelSpec } from "../gpu/kernel_spec.ts";
import type { LaunchContext, OpDef } from "../graph/op.ts";
import { formatShape, sameShape, type Tensor } from "../graph/tensor.ts";
import { checkPositions } from "./kv_cache.ts";

/** Options of {@link cachedAttention}. */
export interface CachedAttentionOptions {
  /** Factor of q.k before the softmax; default 1 / sqrt(head_dim). */
  scale?: number;
  /** Keys a query attends to at most, itself included (HF's sliding_window); default all. */
  window?: number;
  /** Soft cap c of the scores: each becomes c tanh(score / c) (Gemma 2's); default 0: none. */
  softcap?: number;
}

interface CachedAttentionAttrs {
  scale: number;
  /** Keys a query attends to at most, itself included; {@link NO_WINDOW} for all. */
  window: number;
  /** 0: none. */
  softcap: number;
}

/** The window of an attention without one (the shader's params hold a u32). */
const NO_WINDOW = 2 ** 32 - 1;

/** Sizes of a cached-attention problem: q [slots, tn, heads, headDim], caches [slots, tmax, kvHeads, headDim]. */
interface CachedDims {
  slots: number;
  tn: number;
  tmax: number;
  heads: number;
  kvHeads: number;
  headDim: number;
}

/** Checks the operands of `cached_attention`; returns the sizes. */
function cachedDims(q: Tensor, kCache: Tensor, vCache: Tensor, positions: Tensor): CachedDims {
  const fail = (expected: string, received: Tensor): never => {
    throw new Error(
      `Cannot apply "cached_attention" to ${q}: expected ${expected}, received ${received}`,
    );
  };
  if (q.dtype !== "f32" || q.rank !== 4) {
    fail("f32 queries of shape [slots, tokens, heads, head_dim]", q);
  }
  const [slots, tn, heads, headDim] = q.shape;
  const [, tmax, kvHeads] = kCache.shape;
  if (
    kCache.dtype !== "f32" || kCache.rank !== 4 || kCache.shape[0] !== slots ||
    kCache.shape[3] !== headDim || heads % kvHeads !== 0
  ) {
    fail(
      `an f32 key cache of shape [${slots},max_len,kv_heads,${headDim}], kv_heads dividing ${heads}`,
      kCache,
    );
  }
  if (vCache.dtype !== "f32" || !sameShape(vCache.shape, kCache.shape)) {
    fail(`an f32 value cache of shape ${formatShape(kCache.shape)}`, vCache);
  }
  checkPositions("cached_attention", q, positions, slots, tn);
  return { slots, tn, tmax, heads, kvHeads, headDim };
}

/** Floats before the accumulators of a part record (m, l, two unused; the shader's). */
const RECORD_HEAD = 4;

/** Fewest keys per part when the key range is split over workgroups. */
const MIN_CHUNK = 32;

/** Most bytes of part records that splitting the key range over workgroups may add up to. */
const SPLIT_SCRATCH_BYTES = 64 * 2 ** 20;

/** How the attend kernel spreads a problem over workgroups and invocations. */
interface Layout {
  rowLanes: number;
  keyLanes: number;
  /** Slots per workgroup, one per lane group of rowLanes * keyLanes (CPU adapters). */
  slotLanes: number;
  /** Home rows per invocation: 4 * rowGroups. */
  rowGroups: number;
  /** Keys per tile: 4 * colGroups. */
  colGroups: number;
  splits: number;
  /** Keys per part: ceil(tmax / (splits * keyLanes)). */
  chunk: number;
  /** Row blocks per (slot, kv head). */
  blocks: number;
}

/**
 * Invocations: 64 on GPUs, one SIMD group of 8 on CPU adapters. Each holds up to 8 home rows of
 * a (slot, kv head), of which there are tn * heads / kvHeads; as few invocations as hold them
 * (a power of two) are row lanes. On a CPU adapter with slots enough to fill the others, they
 * are slot lanes: each walks every key of its own slot, with no key split and no combine pass
 * (30 decode-shaped attentions at 32 slots and a 48-key cache: 45.7 -> 27.6 ms; at 8 slots and
 * 300 keys ~6% slower than key lanes, at 32 slots even). Otherwise they are key lanes, each
 * walking its own chunk of the keys (decode has few home rows), and the key range is split over
 * workgroups until there are about `target` of them (1024 on GPUs, 16 on CPU adapters), keeping
 * at least {@link MIN_CHUNK} keys per part and the part records within
 * {@link SPLIT_SCRATCH_BYTES}. Tiles have up to 16 keys, fewer when the parts are shorter.
 */
function layout(ctx: LaunchContext, dims: CachedDims): Layout {
  const fallback = ctx.gpu.summary.isFallback;
  const wg = fallback ? 8 : 64;
  const homeRows = dims.tn * (dims.heads / dims.kvHeads);
  const rowGroups = homeRows > 4 ? 2 : 1;
  const rowLanes = Math.min(wg, 2 ** Math.ceil(Math.log2(Math.ceil(homeRows / (4 * rowGroups)))));
  // On a CPU adapter, slots enough to fill the lanes the rows leave take them, one slot each.
  const slotLanes = fallback && dims.slots >= wg / rowLanes ? wg / rowLanes : 1;
  const keyLanes = wg / (rowLanes * slotLanes);
  const blocks = Math.ceil(homeRows / (rowLanes * 4 * rowGroups));
  const target = fallback ? 16 : 1024;
  const wanted = slotLanes > 1 ? 1 : Math.ceil(target / (blocks * dims.kvHeads * dims.slots));
  const recordBytes = dims.slots * dims.tn * dims.heads * (dims.headDim + RECORD_HEAD) * 4 *
    keyLanes;
  const splits = Math.max(
    1,
    Math.min(
      wanted,
      Math.floor(dims.tmax / (keyLanes * MIN_CHUNK)),
      Math.floor(SPLIT_SCRATCH_BYTES / recordBytes),
    ),
  );
  const chunk = Math.ceil(dims.tmax / (splits * keyLanes));
  const colGroups = Math.min(4, Math.ceil(chunk / 4));
  return { rowLanes, keyLanes, slotLanes, rowGroups, colGroups, splits, chunk, blocks };
}

const CACHED_ATTENTION: OpDef<CachedAttentionAttrs> = {
  name: "cached_attention",
  output([q, kCache, vCache, positions]) {
    cachedDims(q, kCache, vCache, positions);
    return { shape: q.shape, dtype: "f32" };
  },
  launch(ctx, [q, kCache, vCache, positions], out, { scale, window, softcap }) {
    const dims = cachedDims(q.tensor, kCache.tensor, vCache.tensor, positions.tensor);
    const { rowLanes, keyLanes, slotLanes, rowGroups, colGroups, splits, chunk, blocks } = layout(
      ctx,
      dims,
    );
    const grid = [blocks * splits, dims.kvHeads, Math.ceil(dims.slots / slotLanes)] as const;
    if (grid.some((n) => n > MAX_WORKGROUPS_PER_DIM)) {
      throw new Error(
        `Cannot launch "cached_attention" on ${q.tensor}: grid [${grid}] exceeds ${MAX_WORKGROUPS_PER_DIM} per dimension`,
      );
    }
    const spec = (entryPoint: string): KernelSpec => ({
      shader: "cached_attention",
      entryPoint,
      constants: {
        ROW_LANES: rowLanes,
        KEY_LANES: keyLanes,
        SLOT_LANES: slotLanes,
        SPLITS: splits,
        ROW_GROUPS: rowGroups,
        COL_GROUPS: colGroups,
      },
      bindings: ["read", "read", "read", "read", "read", "read_write"],
      params: true,
    });
    const params = packParams({
      slots: dims.slots,
      tn: dims.tn,
      tmax: dims.tmax,
      heads: dims.heads,
      kv_heads: dims.kvHeads,
      head_dim: dims.headDim,
      chunk,
      scale: { f32: scale },
      window,
      softcap: { f32: softcap },
    });
    // Four head-dim elements per load where the rows are whole vec4s.
    const attend = dims.headDim % 4 === 0 ? "attend4" : "attend";
    const operands = [q.buffer, kCache.buffer, vCache.buffer, positions.buffer];
    const parts = splits * keyLanes;
    if (parts === 1) {
      return [{
        spec: spec(attend),
        buffers: [...operands, q.buffer, out.buffer],
        params,
        workgroups: grid,
      }];
    }
    const partBuffer = ctx.scratch(
      q.tensor.size / dims.headDim * parts * (dims.headDim + RECORD_HEAD) * 4,
      "cached_attention:parts",
    );
    return [
      {
        spec: spec(attend),
        buffers: [...operands, q.buffer, partBuffer],
        params,
        workgroups: grid,
      },
      {
        spec: spec("combine"),
        buffers: [...operands, partBuffer, out.buffer],
        params,
        // One invocation per four head-dim elements of a query row.
        workgroups: grid1d(
          Math.ceil(
            q.tensor.size / dims.headDim * Math.ceil(dims.headDim / 4) / (rowLanes * keyLanes),
          ),
        ),
      },
    ];
  },
};

/**
 * Attention of new queries `q` [slots, tokens, heads, head_dim] over the caches `kCache` and
 * `vCache` [slots, max_len, kv_heads, head_dim] (kv_heads dividing heads; query head h uses kv
 * head floor(h / (heads / kv_heads)), HF's repeat_kv). The query at (s, t) with p =
 * `positions[s, t]` >= 0 (i32 [slots, tokens]) attends to cache rows 0 ..= min(p, max_len - 1)
 * of slot s (with `options.window` w, rows from max(0, p + 1 - w) on: HF's sliding window), so
 * write the new keys and values first (`writeKvCache`); p < 0 (padding) gives a zero row.
 * Weights are `softmax(scale * q.k)` in f32, scale 1 / sqrt(head_dim) by default (with
 * `options.softcap` c, of c tanh(scale * q.k / c)). Returns [slots, tokens, heads, head_dim]; not
 * differentiable.
 */
export function cachedAttention(
  q: Tensor,
  kCache: Tensor,
  vCache: Tensor,
  positions: Tensor,
  options: CachedAttentionOptions = {},
): Tensor {
  const scale = options.scale ?? 1 / Math.sqrt(q.lastDim);
  const window = options.window ?? NO_WINDOW;
  const softcap = options.softcap ?? 0;
  if (
    !Number.isFinite(scale) || !Number.isInteger(window) || window < 1 || window > NO_WINDOW ||
    !(softcap >= 0 && Number.isFinite(softcap))
  ) {
    throw new Error(
      `Cannot apply "cached_attention" to ${q}: expected a finite scale, a window >= 1 and a finite softcap >= 0, received ${scale}, ${window} and ${softcap}`,
    );
  }
  const attrs = { scale, window, softcap };
  return q.graph.apply(CACHED_ATTENTION, [q, kCache, vCache, positions], attrs);
}
