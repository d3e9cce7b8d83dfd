// Weights of 16-bit floats packed two per u32 (element 2i in the low half, as safetensors' F16
// and BF16 bytes lie), widened to f32: IEEE binary16 when the including shader's FORMAT is 1
// (`unpack2x16float`, core WGSL: no shader-f16 needed), bfloat16 (the high half of an f32)
// when 2.

// The two elements of a packed pair of halves.
fn halves(u: u32) -> vec2f {
  if (FORMAT == 1u) { return unpack2x16float(u); }
  return vec2f(bitcast<f32>(u << 16u), bitcast<f32>(u & 0xffff0000u));
}
