// Converts f32 values to packed 16-bit floats: BF16 (bfloat16) or F16 (IEEE binary16), two per
// u32 word, element 2i in the low half (the layout of a half-precision variable). Rounds to
// nearest, ties to even, on integer bits (the same result on every adapter): NaNs stay NaN, f16
// overflows to infinity and underflows through subnormals to zero.
// FORMAT (override): 1 bf16, 2 f16.
// Bindings: values (read, n f32 words), packed (write, ceil(n/2) words), params.
// One invocation per packed word; an odd n leaves the last word's high half zero.

override FORMAT: u32 = 1u;
override WG: u32 = 256u;

struct Params {
  n: u32,
}

@group(0) @binding(0) var<storage, read> values: array<u32>;
@group(0) @binding(1) var<storage, read_write> packed: array<u32>;
@group(0) @binding(2) var<uniform> p: Params;

fn to_bf16_bits(x: u32) -> u32 {
  if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu) != 0u) { return (x >> 16u) | 0x40u; }
  return (x + 0x7fffu + ((x >> 16u) & 1u)) >> 16u;
}

// `bits` >> `shift` rounded to nearest, ties to even (shift in 1..31).
fn shift_round(bits: u32, shift: u32) -> u32 {
  let kept = bits >> shift;
  let rest = bits & ((1u << shift) - 1u);
  let halfway = 1u << (shift - 1u);
  return kept + select(0u, 1u, rest > halfway || (rest == halfway && (kept & 1u) == 1u));
}

fn to_f16_bits(x: u32) -> u32 {
  let sign = (x >> 16u) & 0x8000u;
  let exponent = i32((x >> 23u) & 0xffu);
  let mantissa = x & 0x7fffffu;
  if (exponent == 0xff) { return sign | 0x7c00u | select(0u, 0x200u | (mantissa >> 13u), mantissa != 0u); }
  let e = exponent - 112; // rebias 127 -> 15
  if (e >= 31) { return sign | 0x7c00u; }
  if (e <= 0) {
    if (e < -10) { return sign; }
    // Subnormal: the 24-bit significand shifted to units of 2^-24 (a carry makes it normal).
    return sign | shift_round(mantissa | 0x800000u, u32(14 - e));
  }
  // A carry out of the mantissa moves into the exponent, up to infinity: still correct.
  return sign | ((u32(e) << 10u) + shift_round(mantissa, 13u));
}

fn to_half_bits(x: u32) -> u32 {
  if (FORMAT == 1u) { return to_bf16_bits(x); }
  return to_f16_bits(x);
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let word = gid.x + gid.y * nwg.x * WG;
  let first = 2u * word;
  if (first >= p.n) { return; }
  var pair = to_half_bits(values[first]);
  if (first + 1u < p.n) { pair |= to_half_bits(values[first + 1u]) << 16u; }
  packed[word] = pair;
}
