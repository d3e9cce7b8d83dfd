/**
 * Plain-loop CPU references (f64) of RMSNorm and LayerNorm over the last axis: `x` is read as
 * [rows, cols], weight and bias as [cols]. Tests compare the GPU kernels (and, by finite
 * differences, their gradients) against these.
 */

/**
 * HF LlamaRMSNorm of each row: `x * (weight + weightOffset) / sqrt(mean(x^2) + eps)` (Gemma's
 * RMSNorm: weightOffset 1).
 */
export function rmsNormRef(
  x: ArrayLike<number>,
  weight: ArrayLike<number>,
  cols: number,
  eps: number,
  weightOffset = 0,
): Float64Array {
  const out = new Float64Array(x.length);
  for (let r = 0; r < x.length / cols; r++) {
    let ss = 0;
    for (let c = 0; c < cols; c++) ss += x[r * cols + c] ** 2;
    const rstd = 1 / Math.sqrt(ss / cols + eps);
    for (let c = 0; c < cols; c++) {
      out[r * cols + c] = x[r * cols + c] * rstd * (weight[c] + weightOffset);
    }
  }
  return out;
}

/** LayerNorm of each row: `(x - mean) / sqrt(var + eps) * weight + bias`, biased variance. */
export function layerNormRef(
  x: ArrayLike<number>,
  weight: ArrayLike<number>,
  bias: ArrayLike<number>,
  cols: number,
  eps: number,
): Float64Array {
  const out = new Float64Array(x.length);
  for (let r = 0; r < x.length / cols; r++) {
    let sum = 0;
    for (let c = 0; c < cols; c++) sum += x[r * cols + c];
    const mean = sum / cols;
    let ss = 0;
    for (let c = 0; c < cols; c++) ss += (x[r * cols + c] - mean) ** 2;
    const rstd = 1 / Math.sqrt(ss / cols + eps);
    for (let c = 0; c < cols; c++) {
      out[r * cols + c] = (x[r * cols + c] - mean) * rstd * weight[c] + bias[c];
    }
  }
  return out;
}
