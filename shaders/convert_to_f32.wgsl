// Converts packed 16-bit floats to f32: F16 (IEEE binary16) or BF16 (bfloat16), two per u32
// word, element 2i in the low half (little-endian). Works on integer bits only, so the result is
// exact: -0, subnormals, infinities and NaN payloads survive, and no denormal flushing applies.
// FORMAT (override): 0 f16, 1 bf16.
// Bindings: packed (read, ceil(n/2) words), out (write, n words holding f32 bits), params.
// One invocation per packed word; a chunk of a larger tensor is bound with offsets.

override FORMAT: u32 = 0u;
override WG: u32 = 256u;

struct Params {
  n: u32,
}

@group(0) @binding(0) var<storage, read> packed: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> p: Params;

fn f16_to_f32_bits(h: u32) -> u32 {
  let sign = (h & 0x8000u) << 16u;
  let exponent = (h >> 10u) & 0x1fu;
  let mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) { return sign | 0x7f800000u | (mantissa << 13u); } // inf, nan
  if (exponent != 0u) { return sign | ((exponent + 112u) << 23u) | (mantissa << 13u); } // 127 - 15
  if (mantissa == 0u) { return sign; }
  // Subnormal: mantissa * 2^-24, with its top set bit at `top`, is 1.f * 2^(top - 24).
  let top = 31u - countLeadingZeros(mantissa);
  return sign | ((top + 103u) << 23u) | ((mantissa << (23u - top)) & 0x7fffffu);
}

fn to_f32_bits(h: u32) -> u32 {
  if (FORMAT == 1u) { return h << 16u; }
  return f16_to_f32_bits(h);
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let word = gid.x + gid.y * nwg.x * WG;
  let first = 2u * word;
  if (first >= p.n) { return; }
  let pair = packed[word];
  out[first] = to_f32_bits(pair & 0xffffu);
  if (first + 1u < p.n) { out[first + 1u] = to_f32_bits(pair >> 16u); }
}
