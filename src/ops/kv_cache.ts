/**
 * `writeKvCache`: stores the keys or values of new tokens into a KV cache in place (an
 * `inPlace` op on `shaders/kv_cache.wgsl`), for KV-cached generation, keys optionally rotated by
 * RoPE on the way. The cache is normally a graph tensor bound to a long-lived variable. Not
 * differentiable; no eviction, paging or ring-buffer wrap-around: a position outside the cache is
 * skipped.
 * Shader: shaders/kv_cache.wgsl
 * Reference: src/reference/kv_cache.ts
 * Test: tests/ops/kv_cache_test.ts
 */

import { grid1d } from "../gpu/dispatch.ts";
import { packParams } from "../gpu/kernel_params.ts";
import type { OpDef } from "../graph/op.ts";
import { sameShape, type Tensor } from "../graph/tensor.ts";
import { ropeRef } from "../reference/rope.ts";
import { writeKvCacheRef } from "../reference/kv_cache.ts";
import { checkInvFreq, invFreqBuffer } from "./rope.ts";

/**
 * Threads per workgroup: 64, so that a decode step's few rows still spread over the threads of a
 * CPU adapter (one workgroup per thread at a time).
 */
const WG = 64;

/**
 * Throws unless `positions` is an i32 tensor of shape [slots, tn], the positions operand of op
 * `op` applied to `anchor`.
 */
export function checkPositions(
  op: string,
  anchor: Tensor,
  positions: Tensor,
  slots: number,
  tn: number,
): void {
  if (positions.dtype !== "i32" || !sameShape(positions.shape, [slots, tn])) {
    throw new Error(
      `Cannot apply "${op}" to ${anchor}: expected i32 positions of shape [${slots},${tn}], received ${positions}`,
    );
  }
}

/** Attributes of a cache write: RoPE's inverse frequencies when the rows are keys to rotate. */
type WriteAttrs = { invFreq: Float32Array<ArrayBuffer> } | null;

const WRITE_KV_CACHE: OpDef<WriteAttrs> = {
  name: "write_kv_cache",
  inPlace: 0,
  output([cache, x, positions]) {
    if (cache.dtype !== "f32" || cache.rank !== 4) {
      throw new Error(
        `Cannot apply "write_kv_cache" to ${cache}: expected an f32 cache of shape [slots, max_len, kv_heads, head_dim]`,
      );
    }
    const [slots, , kvHeads, headDim] = cache.shape;
    if (
      x.dtype !== "f32" || x.rank !== 4 || x.shape[0] !== slots || x.shape[2] !== kvHeads ||
      x.shape[3] !== headDim
    ) {
      throw new Error(
        `Cannot apply "write_kv_cache" to ${cache}: expected f32 new rows of shape [${slots},tokens,${kvHeads},${headDim}], received ${x}`,
      );
    }
    checkPositions("write_kv_cache", cache, positions, slots, x.shape[1]);
    return { shape: cache.shape, dtype: "f32" };
  },
  launch(ctx, [cache, x, positions], out, attrs) {
    const [slots, tn, kvHeads, headDim] = x.tensor.shape;
    const invFreq = attrs
      ? invFreqBuffer(ctx, attrs.invFreq, "write_kv_cache_inv_freq")
      : positions.buffer; // unread without rotation
    // Four elements, or four pairs, per invocation where rows and halves split into quads.
    const quads = attrs ? headDim % 8 === 0 : (kvHeads * headDim) % 4 === 0;
    const invocations = (attrs ? x.tensor.size / 2 : x.tensor.size) / (quads ? 4 : 1);
    return [{
      spec: {
        shader: "kv_cache",
        entryPoint: quads ? "main4" : "main",
        constants: { WG, ...(attrs ? { ROPE: 1 } : {}) },
        bindings: ["read", "read", "read", "read_write"],
        params: true,
      },
      buffers: [x.buffer, positions.buffer, invFreq, out.buffer],
      params: packParams({
        rows: slots * tn,
        tn,
        tmax: cache.tensor.shape[1],
        width: kvHeads * headDim,
        half: headDim / 2,
      }),
      workgroups: grid1d(Math.ceil(invocations / WG)),
    }];
  },
  reference: ([cache, x, positions], [ct, xt], attrs) => {
    const [slots, maxLen, kvHeads, headDim] = ct.shape;
    const rows = attrs ? ropeRef(x, positions, kvHeads, headDim, attrs.invFreq) : x;
    return writeKvCacheRef(cache, rows, positions, {
      slots,
      tokens: xt.shape[1],
      maxLen,
      heads: kvHeads,
      kvHeads,
      headDim,
    });
  },
};

/**
 * The cache `cache` [slots, max_len, kv_heads, head_dim] (f32) with the new rows `x` [slots,
 * tokens, kv_heads, head_dim] stored in place: `cache[s, positions[s, t]] = x[s, t]` for every
 * (s, t) with 0 <= positions[s, t] < max_len; `positions` [slots, tokens] (i32) outside that
 * range (negative: padding) are skipped, and the rest of the cache is untouched. The result
 * shares the cache's storage (a variable's buffer when `cache` is bound to one): read the cache
 * through it, and pass it, not `cache`, to the next write. Two tokens of one slot at the same
 * position race. With `invFreq` the rows are keys, stored rotated as `rope(x, positions,
 * invFreq)` would give them, in the same dispatch. Not differentiable.
 */
export function writeKvCache(
  cache: Tensor,
  x: Tensor,
  positions: Tensor,
  { invFreq }: { invFreq?: Float32Array<ArrayBuffer> } = {},
): Tensor {
  if (invFreq) checkInvFreq("write_kv_cache", x, invFreq, x.lastDim);
  const attrs = invFreq ? { invFreq } : null;
  return cache.graph.apply(WRITE_KV_CACHE, [cache, x, positions], attrs);
}
