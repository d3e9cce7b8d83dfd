/**
 * The KV cache of one generation shape: for every layer a key and a value variable of shape
 * [slots, maxLen, kvHeads, headDim], allocated once per (slots, maxLen) and reused across calls.
 * Holds memory only; the ops that write and read it are in `src/ops/kv_cache.ts` and
 * `src/ops/cached_attention.ts`.
 */

import type { GpuContext } from "../gpu/device.ts";
import { TENSOR_USAGE } from "../gpu/buffer_pool.ts";
import type { Variable } from "../graph/tensor.ts";
import { kvLayout, type ModelConfig } from "../model/model_config.ts";

/** Per-layer key and value caches. */
export interface KvCacheSet {
  slots: number;
  maxLen: number;
  keys: Variable[];
  values: Variable[];
  /** Bytes of one position row of one slot: kvHeads * headDim * 4. */
  rowBytes: number;
}

/** Allocates the caches of `cfg` for `slots` sequences of up to `maxLen` tokens. */
export function createKvCacheSet(
  gpu: GpuContext,
  cfg: ModelConfig,
  slots: number,
  maxLen: number,
  label: string,
): KvCacheSet {
  const { kvHeads, headDim } = kvLayout(cfg);
  const shape = [slots, maxLen, kvHeads, headDim];
  const bytes = slots * maxLen * kvHeads * headDim * 4;
  const make = (kind: string, layer: number): Variable => ({
    name: `${label}.${kind}${layer}`,
    shape,
    dtype: "f32",
    buffer: gpu.device.createBuffer({
      label: `${label}.${kind}${layer}`,
      size: bytes,
      usage: TENSOR_USAGE,
    }),
  });
  const layers = Array.from({ length: cfg.numLayers }, (_, l) => l);
  return {
    slots,
    maxLen,
    keys: layers.map((l) => make("k", l)),
    values: layers.map((l) => make("v", l)),
    rowBytes: kvHeads * headDim * 4,
  };
}

/** Frees the caches' buffers. */
export function destroyKvCacheSet(set: KvCacheSet): void {
  for (const v of [...set.keys, ...set.values]) v.buffer.destroy();
}
