/**
 * Plain-loop CPU reference of rotary position embedding (HF rotate-half convention) for a given
 * table of inverse frequencies. The angles are rounded to f32 exactly as HF computes them (f32
 * inv_freq, one f32 product with the position); cos, sin and the rotation are then f64. Tests
 * compare the GPU kernel against this.
 */

/**
 * RoPE of `x` read as [tokens, heads, headDim] with one position per token
 * (`positions.length` tokens): for i < headDim / 2, angle = f32(f32(pos) * invFreq[i]) (the
 * table's values f32) and out[i] = x[i] cos - x[i + half] sin,
 * out[i + half] = x[i + half] cos + x[i] sin.
 */
export function ropeRef(
  x: ArrayLike<number>,
  positions: ArrayLike<number>,
  heads: number,
  headDim: number,
  invFreq: ArrayLike<number>,
): Float64Array {
  const half = headDim / 2;
  const out = new Float64Array(x.length);
  for (let t = 0; t < positions.length; t++) {
    for (let h = 0; h < heads; h++) {
      const base = (t * heads + h) * headDim;
      for (let i = 0; i < half; i++) {
        const angle = Math.fround(Math.fround(positions[t]) * invFreq[i]);
        const cos = Math.cos(angle);
        const sin = Math.sin(angle);
        const lo = x[base + i];
        const hi = x[base + i + half];
        out[base + i] = lo * cos - hi * sin;
        out[base + i + half] = hi * cos + lo * sin;
      }
    }
  }
  return out;
}
