/**
 * CPU reference of the packed weight layout (`shaders/pack_weight.wgsl`): op(B) [k, n] (stored
 * [n, k] when `transB`) as the texels of the packed texture, four values each.
 */

/** The packed texels of `b` as a flat array, texel t at values 4t .. 4t+3; unwritten ones 0. */
export function packWeightRef(
  b: ArrayLike<number>,
  { n, k, transB }: { n: number; k: number; transB: boolean },
): Float32Array {
  const k4 = Math.ceil(k / 4);
  const blocks = Math.ceil(n / 128);
  const out = new Float32Array(blocks * 128 * k4 * 4);
  for (let col = 0; col < n; col++) {
    const [block, strip] = [Math.floor(col / 128), Math.floor((col % 128) / 32)];
    const [lane, c] = [Math.floor((col % 32) / 4), col % 4];
    for (let kk = 0; kk < k; kk++) {
      const texel = (block * k4 + Math.floor(kk / 4)) * 128 + 32 * strip + 8 * c + lane;
      out[4 * texel + (kk % 4)] = transB ? b[col * k + kk] : b[kk * n + col];
    }
  }
  return out;
}
