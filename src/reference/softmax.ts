/**
 * Plain-loop CPU references (f64) of softmax and log-softmax over the last axis, stable (the row
 * max is subtracted before exp). Tests compare the GPU kernels against these.
 */

/** Per row of `x` read as [x.length / cols, cols]: its max m and log(sum(exp(x - m))). */
function rowStats(x: ArrayLike<number>, cols: number, r: number): { m: number; logSum: number } {
  let m = -Infinity;
  for (let c = 0; c < cols; c++) m = Math.max(m, x[r * cols + c]);
  let s = 0;
  for (let c = 0; c < cols; c++) s += Math.exp(x[r * cols + c] - m);
  return { m, logSum: Math.log(s) };
}

/** Log-softmax of each row of `x` read as [x.length / cols, cols]. */
export function logSoftmaxRef(x: ArrayLike<number>, cols: number): Float64Array {
  const out = new Float64Array(x.length);
  for (let r = 0; r < x.length / cols; r++) {
    const { m, logSum } = rowStats(x, cols, r);
    for (let c = 0; c < cols; c++) out[r * cols + c] = x[r * cols + c] - m - logSum;
  }
  return out;
}

/** Softmax of each row of `x` read as [x.length / cols, cols]. */
export function softmaxRef(x: ArrayLike<number>, cols: number): Float64Array {
  return logSoftmaxRef(x, cols).map(Math.exp);
}

/** Gradient of `sum(softmax(x) * g)` with respect to `x`: `y * (g - sum(g * y))` per row. */
export function softmaxGradRef(
  x: ArrayLike<number>,
  cols: number,
  g: ArrayLike<number>,
): Float64Array {
  const y = softmaxRef(x, cols);
  const dx = new Float64Array(x.length);
  for (let r = 0; r < x.length / cols; r++) {
    let s = 0;
    for (let c = 0; c < cols; c++) s += g[r * cols + c] * y[r * cols + c];
    for (let c = 0; c < cols; c++) dx[r * cols + c] = y[r * cols + c] * (g[r * cols + c] - s);
  }
  return dx;
}

/** Gradient of `sum(logSoftmax(x) * g)` with respect to `x`: `g - softmax(x) * sum(g)` per row. */
export function logSoftmaxGradRef(
  x: ArrayLike<number>,
  cols: number,
  g: ArrayLike<number>,
): Float64Array {
  const y = softmaxRef(x, cols);
  const dx = new Float64Array(x.length);
  for (let r = 0; r < x.length / cols; r++) {
    let s = 0;
    for (let c = 0; c < cols; c++) s += g[r * cols + c];
    for (let c = 0; c < cols; c++) dx[r * cols + c] = g[r * cols + c] - y[r * cols + c] * s;
  }
  return dx;
}
