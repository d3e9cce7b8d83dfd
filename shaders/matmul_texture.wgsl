// PROTOTYPE (bench only): the register-blocked matmul reading A and B from rgba32float textures
// instead of storage buffers. On Mesa's llvmpipe a texel fetch gathers 8 lanes x vec4 in ~75
// cycles while a storage-buffer load costs ~100 cycles per lane, so this runs ~5x faster there.
// The graph runtime cannot bind textures yet, so `bench/_texture_matmul.ts` drives it directly.
// Aligned shapes only, no transposes, no batch: M % 32 == 0, N % (16*WG_X) == 0, K % 4 == 0.
//
// Bindings: ta (texture) A [M, K] as texels: element e at texel e/4 of a TEX_W-wide texture
//           tb (texture) B [K, N], same layout
//           c (write) C [M, N] as vec4 rows
//           p (uniform) Params (m, n, k)
// Grid: x = N / (16*WG_X), y = M / 32. Each invocation computes a 32 x 16 block.

override WG_X: u32 = 8u;
override TEX_W: u32 = 4096u; // texels per texture row (a power of two)

struct Params {
  m: u32,
  n: u32,
  k: u32,
}

@group(0) @binding(0) var ta: texture_2d<f32>;
@group(0) @binding(1) var tb: texture_2d<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4f>;
@group(0) @binding(3) var<uniform> p: Params;

// acc[4r + v] = C[row0 + r, col0 + 4v .. +4].
var<private> acc: array<vec4f, 128>;
var<private> bk: array<mat4x4f, 4>;
var<private> row0: u32;
var<private> col0: u32;

// Elements e .. e+3 (e a multiple of 4) of a texture-held matrix.
fn quad(t: texture_2d<f32>, e: u32) -> vec4f {
  let texel = e / 4u;
  return textureLoad(t, vec2u(texel % TEX_W, texel / TEX_W), 0);
}

fn load_b(v: u32, k0: u32) {
  let e = k0 * p.n + col0 + 4u * v;
  bk[v] = mat4x4f(quad(tb, e), quad(tb, e + p.n), quad(tb, e + 2u * p.n), quad(tb, e + 3u * p.n));
}

// acc[4r + v] += bk[v] * A[row0 + r, k0 .. k0+4].
fn multiply_row(r: u32, k0: u32) {
  let ar = quad(ta, (row0 + r) * p.k + k0);
  acc[4u * r] += bk[0] * ar;
  acc[4u * r + 1u] += bk[1] * ar;
  acc[4u * r + 2u] += bk[2] * ar;
  acc[4u * r + 3u] += bk[3] * ar;
}

fn multiply_group(g: u32, k0: u32) {
  multiply_row(4u * g, k0);
  multiply_row(4u * g + 1u, k0);
  multiply_row(4u * g + 2u, k0);
  multiply_row(4u * g + 3u, k0);
}

fn store_block(g: u32, v: u32) {
  let nq = p.n / 4u;
  let i = (row0 + 4u * g) * nq + col0 / 4u + v;
  c[i] = acc[16u * g + v];
  c[i + nq] = acc[16u * g + 4u + v];
  c[i + 2u * nq] = acc[16u * g + 8u + v];
  c[i + 3u * nq] = acc[16u * g + 12u + v];
}

fn store_group(g: u32) {
  store_block(g, 0u);
  store_block(g, 1u);
  store_block(g, 2u);
  store_block(g, 3u);
}

@compute @workgroup_size(WG_X)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  row0 = wid.y * 32u;
  col0 = (wid.x * WG_X + lid.x) * 16u;
  for (var k0 = 0u; k0 < p.k; k0 += 4u) {
    load_b(0u, k0);
    load_b(1u, k0);
    load_b(2u, k0);
    load_b(3u, k0);
    multiply_group(0u, k0);
    multiply_group(1u, k0);
    multiply_group(2u, k0);
    multiply_group(3u, k0);
    multiply_group(4u, k0);
    multiply_group(5u, k0);
    multiply_group(6u, k0);
    multiply_group(7u, k0);
  }
  store_group(0u);
  store_group(1u);
  store_group(2u);
  store_group(3u);
  store_group(4u);
  store_group(5u);
  store_group(6u);
  store_group(7u);
}
