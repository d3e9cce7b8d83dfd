/**
 * Plain-loop f64 CPU reference of the prologue products (`prologue_matmul.ts`): A computed from
 * x and aux (RMSNorm, or a gated activation), then the matmul reference.
 */

import type { APrologue } from "../ops/prologue_matmul.ts";
import { gatedRef } from "./elementwise.ts";
import { rmsNormRef } from "./layernorm.ts";
import { matmulRef, type MatmulRefShape } from "./matmul.ts";

/** `prologue(x, aux) @ op(b)` in f64: x is A's producer [.., k] (never transposed). */
export function prologueMatmulRef(
  x: ArrayLike<number>,
  aux: ArrayLike<number>,
  b: ArrayLike<number>,
  prologue: APrologue,
  shape: MatmulRefShape,
): Float64Array {
  const a = prologue.kind === "rms_norm"
    ? rmsNormRef(x, aux, shape.k, prologue.eps, prologue.weightOffset)
    : gatedRef(prologue.gate, x, aux);
  return matmulRef(a, b, shape);
}
