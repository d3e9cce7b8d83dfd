/**
 * Plain-loop CPU references (f64) of the last-axis reductions: `x` is read as [rows, cols] and
 * each row gives one value (the [..., 1] result, flattened). Tests compare the GPU kernels
 * against these.
 */

import type { ReduceKind } from "../ops/reduce.ts";

/** `kind` (sum, mean, max) of each row of `x` read as [x.length / cols, cols]. */
export function reduceLastRef(kind: ReduceKind, x: ArrayLike<number>, cols: number): Float64Array {
  const rows = x.length / cols;
  const out = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let acc = kind === "max" ? -Infinity : 0;
    for (let c = 0; c < cols; c++) {
      const v = x[r * cols + c];
      acc = kind === "max" ? Math.max(acc, v) : acc + v;
    }
    out[r] = kind === "mean" ? acc / cols : acc;
  }
  return out;
}

/**
 * Gradient of the last-axis max given the output gradient `g` (one value per row): each row's
 * g goes to its first (lowest-index) maximum, every other element gets 0.
 */
export function maxLastGradRef(
  x: ArrayLike<number>,
  cols: number,
  g: ArrayLike<number>,
): Float64Array {
  const dx = new Float64Array(x.length);
  for (let r = 0; r < g.length; r++) {
    let best = 0;
    for (let c = 1; c < cols; c++) if (x[r * cols + c] > x[r * cols + best]) best = c;
    dx[r * cols + best] = g[r];
  }
  return dx;
}
