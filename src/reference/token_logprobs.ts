/**
 * Plain-loop CPU references (f64) of the per-row token statistics over the last (vocabulary)
 * axis: with u = x / temperature, the log-probability of the target, the softmax entropy, logZ
 * and the mean of u under the softmax; and their gradient. A target outside [0, cols) gives
 * log-prob 0 and no gradient, as in the GPU op. Tests compare the GPU kernels against these.
 */

import { logSoftmaxRef } from "./softmax.ts";

/** Columns of the statistics each row gets: log-prob, entropy, logZ, mean of u. */
export const TOKEN_STATS_WIDTH = 4;

/** u = x / temperature, then its log-softmax, per row of `cols`. */
function scaledLogSoftmax(x: ArrayLike<number>, cols: number, temperature: number) {
  const u = Float64Array.from(x, (v) => v / temperature);
  return { u, logp: logSoftmaxRef(u, cols) };
}

/**
 * `[logp, entropy, logZ, mean]` per row of `x` read as [targets.length, cols], with u = x /
 * `temperature`: logp = log_softmax(u)[target] (0 outside [0, cols)), entropy = -sum(p log p),
 * logZ = logsumexp(u), mean = sum(p * u).
 */
export function tokenStatsRef(
  x: ArrayLike<number>,
  cols: number,
  targets: ArrayLike<number>,
  temperature = 1,
): Float64Array {
  const { u, logp } = scaledLogSoftmax(x, cols, temperature);
  const out = new Float64Array(targets.length * TOKEN_STATS_WIDTH);
  for (let r = 0; r < targets.length; r++) {
    const target = targets[r];
    let entropy = 0;
    let mean = 0;
    for (let c = 0; c < cols; c++) {
      const i = r * cols + c;
      entropy -= Math.exp(logp[i]) * logp[i];
      mean += Math.exp(logp[i]) * u[i];
    }
    const at = r * TOKEN_STATS_WIDTH;
    if (target >= 0 && target < cols) out[at] = logp[r * cols + target];
    out[at + 1] = entropy;
    out[at + 2] = u[r * cols] - logp[r * cols];
    out[at + 3] = mean;
  }
  return out;
}

/** `log_softmax(x)[r, targets[r]]` for each row r of `x` read as [targets.length, cols]. */
export function tokenLogprobsRef(
  x: ArrayLike<number>,
  cols: number,
  targets: ArrayLike<number>,
): Float64Array {
  const stats = tokenStatsRef(x, cols, targets);
  return Float64Array.from(targets, (_, r) => stats[r * TOKEN_STATS_WIDTH]);
}

/** Entropy `-sum(p * log p)` of `p = softmax(x)` for each row of `x` read as [rows, cols]. */
export function tokenEntropyRef(x: ArrayLike<number>, cols: number): Float64Array {
  const stats = tokenStatsRef(x, cols, new Float64Array(x.length / cols));
  return Float64Array.from({ length: x.length / cols }, (_, r) => stats[r * TOKEN_STATS_WIDTH + 1]);
}

/**
 * Gradient of `sum(tokenStats(x) * g)` with respect to `x` (`g` [rows, 4], one weight per
 * statistic), from the closed forms the GPU backward uses.
 */
export function tokenStatsGradRef(
  x: ArrayLike<number>,
  cols: number,
  targets: ArrayLike<number>,
  g: ArrayLike<number>,
  temperature = 1,
): Float64Array {
  const { u, logp } = scaledLogSoftmax(x, cols, temperature);
  const stats = tokenStatsRef(x, cols, targets, temperature);
  const dx = new Float64Array(x.length);
  for (let r = 0; r < targets.length; r++) {
    const at = r * TOKEN_STATS_WIDTH;
    const valid = targets[r] >= 0 && targets[r] < cols;
    const [gLogp, gEntropy, gLogZ, gMean] = [0, 1, 2, 3].map((k) => g[at + k]);
    for (let c = 0; c < cols; c++) {
      const i = r * cols + c;
      const p = Math.exp(logp[i]);
      const centred = u[i] - stats[at + 3];
      let du = p * gLogZ - p * gEntropy * centred + p * gMean * (1 + centred);
      if (valid) du += gLogp * (Number(c === targets[r]) - p);
      dx[i] = du / temperature;
    }
  }
  return dx;
}
