/**
 * Plain-loop CPU references (f64) of the per-row token log-probability and softmax entropy over
 * the last axis, and their gradients. A target outside [0, cols) gives 0 and no gradient, as in
 * the GPU op. Tests compare the GPU kernels against these.
 */

import { logSoftmaxRef } from "./softmax.ts";

/** `log_softmax(x)[r, targets[r]]` for each row r of `x` read as [targets.length, cols]. */
export function tokenLogprobsRef(
  x: ArrayLike<number>,
  cols: number,
  targets: ArrayLike<number>,
): Float64Array {
  const logp = logSoftmaxRef(x, cols);
  const out = new Float64Array(targets.length);
  for (let r = 0; r < targets.length; r++) {
    const target = targets[r];
    if (target >= 0 && target < cols) out[r] = logp[r * cols + target];
  }
  return out;
}

/** Entropy `-sum(p * log p)` of `p = softmax(x)` for each row of `x` read as [rows, cols]. */
export function tokenEntropyRef(x: ArrayLike<number>, cols: number): Float64Array {
  const logp = logSoftmaxRef(x, cols);
  const out = new Float64Array(x.length / cols);
  for (let i = 0; i < x.length; i++) out[Math.floor(i / cols)] -= Math.exp(logp[i]) * logp[i];
  return out;
}

/** Gradient of `sum(tokenLogprobs(x) * g)` with respect to `x`: `g * (onehot - softmax(x))`. */
export function tokenLogprobsGradRef(
  x: ArrayLike<number>,
  cols: number,
  targets: ArrayLike<number>,
  g: ArrayLike<number>,
): Float64Array {
  const logp = logSoftmaxRef(x, cols);
  const dx = new Float64Array(x.length);
  for (let r = 0; r < targets.length; r++) {
    const target = targets[r];
    if (target < 0 || target >= cols) continue;
    for (let c = 0; c < cols; c++) {
      dx[r * cols + c] = g[r] * (Number(c === target) - Math.exp(logp[r * cols + c]));
    }
  }
  return dx;
}

/** Gradient of `sum(tokenEntropy(x) * g)` with respect to `x`: `-g * p * (x - sum(p * x))`. */
export function tokenEntropyGradRef(
  x: ArrayLike<number>,
  cols: number,
  g: ArrayLike<number>,
): Float64Array {
  const logp = logSoftmaxRef(x, cols);
  const dx = new Float64Array(x.length);
  for (let r = 0; r < g.length; r++) {
    let mean = 0;
    for (let c = 0; c < cols; c++) mean += Math.exp(logp[r * cols + c]) * x[r * cols + c];
    for (let c = 0; c < cols; c++) {
      const i = r * cols + c;
      dx[i] = -g[r] * Math.exp(logp[i]) * (x[i] - mean);
    }
  }
  return dx;
}
