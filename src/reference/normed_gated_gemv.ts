/**
 * Plain-loop f64 CPU reference of `normedGatedGemv` (`src/ops/normed_gated_gemv.ts`): HF's
 * RMSNorm, the gate and up products by weights stored [n, k], and the gated activation.
 */

import type { GateKind } from "../ops/gated.ts";
import { gatedRef } from "./elementwise.ts";
import { rmsNormRef } from "./layernorm.ts";
import { matmulRef } from "./matmul.ts";

/**
 * `f(x @ gate^T) * (x @ up^T)` in f64 with x = rmsNorm(h, gamma, eps, weightOffset), rows of `k`
 * values.
 */
export function normedGatedGemvRef(
  h: ArrayLike<number>,
  gamma: ArrayLike<number>,
  gate: ArrayLike<number>,
  up: ArrayLike<number>,
  { k, n, eps, weightOffset = 0, kind }: {
    k: number;
    n: number;
    eps: number;
    weightOffset?: number;
    kind: GateKind;
  },
): Float64Array {
  const x = rmsNormRef(h, gamma, k, eps, weightOffset);
  const shape = { m: h.length / k, k, n, transB: true };
  return gatedRef(kind, matmulRef(x, gate, shape), matmulRef(x, up, shape));
}
