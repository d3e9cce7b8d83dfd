// The soft cap of attention scores (Gemma 2's attn_logit_softcapping), shared by the kernels that
// cap them (attention_core.wgsl's, cached_attention.wgsl).

// c * tanh(x / c) of every element of m (tanh's argument clamped to +-15, where it is +-1 in f32).
fn softcapped(m: mat4x4f, c: f32) -> mat4x4f {
  let lo = vec4f(-15.0);
  let hi = vec4f(15.0);
  return mat4x4f(
    tanh(clamp(m[0] / c, lo, hi)),
    tanh(clamp(m[1] / c, lo, hi)),
    tanh(clamp(m[2] / c, lo, hi)),
    tanh(clamp(m[3] / c, lo, hi)),
  ) * c;
}
