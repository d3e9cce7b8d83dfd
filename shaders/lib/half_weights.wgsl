// Weights of 16-bit floats packed two per u32 word (element 2i in the low half of word i, as
// safetensors' BF16 and F16 bytes lie), widened to f32 as they are read. `format` is the
// including shader's override (constant-folded): 1 bfloat16 (the high half of an f32), 2 IEEE
// binary16 (`unpack2x16float`, core WGSL: no shader-f16 needed); 0, f32 words, is the caller's
// own case. The host's codes: `halfFormatCode` in src/ops/matmul_variants.ts.

// The two elements of a packed word.
fn halves(format: u32, w: u32) -> vec2f {
  if (format == 1u) { return vec2f(bitcast<f32>(w << 16u), bitcast<f32>(w & 0xffff0000u)); }
  return unpack2x16float(w);
}

// Element i of a buffer of packed words, given word i / 2.
fn half_at(format: u32, word: u32, i: u32) -> f32 {
  let pair = halves(format, word);
  return select(pair.x, pair.y, (i & 1u) == 1u);
}
