// The rotation of HF's default RoPE at one position and frequency, shared by rope.wgsl and the
// rotating KV-cache write (kv_cache.wgsl): angle = f32(pos) * inv_freq, one rounded f32 product as
// HF's f32 matmul (see rope.wgsl on keeping it rounded), reduced to [-pi, pi] before cos and sin.

// 2*pi = TWO_PI_1 + TWO_PI_2 + TWO_PI_3: the first two have 8 significant bits, so k * TWO_PI_1
// and k * TWO_PI_2 are exact for |k| < 2^16 and the first two subtractions below are exact.
const TWO_PI_1: f32 = 6.28125;
const TWO_PI_2: f32 = 0.00193023681640625;
const TWO_PI_3: f32 = 5.070363386039389e-6;
const INV_TWO_PI: f32 = 0.15915494309189535;

// a - 2*pi*k with k = round(a / 2pi), in [-pi, pi] up to rounding: cos and sin builtins are only
// accurate near zero, so angles of long positions are reduced first. Within ~1 ulp of pi for
// |a| < 2^16 * 2*pi (~4e5); less precise beyond.
fn reduce_angle(a: f32) -> f32 {
  let k = round(a * INV_TWO_PI);
  return ((a - k * TWO_PI_1) - k * TWO_PI_2) - k * TWO_PI_3;
}

// (cos, sin) of the angle of position `pos` at inverse frequency `inv_freq`.
fn rotation(pos: i32, inv_freq: f32) -> vec2f {
  let angle = reduce_angle(f32(pos) * inv_freq);
  return vec2f(cos(angle), sin(angle));
}

// The pair (x[i], x[i + D/2]) rotated by the angle whose (cos, sin) is `cs`.
fn rotate_pair(x_lo: f32, x_hi: f32, cs: vec2f) -> vec2f {
  return vec2f(x_lo * cs.x - x_hi * cs.y, x_hi * cs.x + x_lo * cs.y);
}

// The (cos, sin) of position `pos` at four inverse frequencies: cosines in column 0, sines in 1.
fn rotations4(pos: i32, inv_freq: vec4f) -> mat2x4f {
  let r0 = rotation(pos, inv_freq.x);
  let r1 = rotation(pos, inv_freq.y);
  let r2 = rotation(pos, inv_freq.z);
  let r3 = rotation(pos, inv_freq.w);
  return mat2x4f(vec4f(r0.x, r1.x, r2.x, r3.x), vec4f(r0.y, r1.y, r2.y, r3.y));
}

// Four pairs (x_lo, x_hi) rotated as rotate_pair does each, by rotations4's `cs`: the rotated
// x_lo in column 0, x_hi in 1.
fn rotate_pairs4(x_lo: vec4f, x_hi: vec4f, cs: mat2x4f) -> mat2x4f {
  return mat2x4f(x_lo * cs[0] - x_hi * cs[1], x_hi * cs[0] + x_lo * cs[1]);
}
