/**
 * RMSNorm over the last axis with HF's LlamaRMSNorm semantics (also Qwen2/Qwen3, and Qwen3's
 * per-head q/k norm, which is the same op on [..., heads, head_dim] with a [head_dim] weight).
 * It shares LayerNorm's shader and backward machinery (`layernorm.ts`); Gemma's `(1 + weight)`
 * is the same op with a weight offset of 1.
 */

import type { Tensor } from "../graph/tensor.ts";
import { applyNorm } from "./layernorm.ts";

/**
 * RMSNorm over the last axis: `(x * rsqrt(mean(x^2) + eps)) * (weight + weightOffset)` per row,
 * in f32, in HF's order (normalize, then scale; Gemma's `1 + weight` rounded to f32 first).
 * `weight` has shape [C], C = x's last dimension. Differentiable in x and weight (the weight
 * gradient is summed over all rows).
 */
export function rmsNorm(x: Tensor, weight: Tensor, eps: number, weightOffset = 0): Tensor {
  return applyNorm("rms_norm", [x, weight], { eps, weightOffset });
}
