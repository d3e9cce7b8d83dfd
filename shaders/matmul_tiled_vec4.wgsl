// Workgroup-memory tiled matmul with vec4 loads, for GPUs: C[b] = op(A[b]) @ op(B[b]) where op
// transposes when TRANS_A / TRANS_B. Like matmul_tiled.wgsl, a workgroup computes a BM x BN tile
// of C and each invocation a 4x4 block of it, but every global load brings four elements (one
// vec4) and the staged tiles are k-major vec4 rows, so the inner loop reads one vec4 of A and one
// of B per k. The contiguous dimension of each stored operand (K of A, M of A^T, N of B, K of
// B^T) must be a multiple of 4, which also makes every batch stride one; M, N and K are otherwise
// free: staged values past the edges are zeros and stores past M or N are skipped.
//
// Bindings: a (read)  A [batch][M, K], or [batch][K, M] with TRANS_A, as vec4s; batch stride
//                     p.stride_a (elements)
//           b (read)  B [batch][K, N], or [batch][N, K] with TRANS_B, as vec4s; batch stride
//                     p.stride_b (elements; 0: one B shared by every batch)
//           c (write) C [batch][M, N], batch stride p.stride_c
//           p (uniform) Params
// Grid: x = ceil(N / BN), y = ceil(M / BM), z = batch. Workgroup: (BN / 4, BM / 4).

override BM: u32 = 64u; // multiple of 4
override BN: u32 = 64u; // multiple of 4
override BK: u32 = 16u; // multiple of 4
override TRANS_A: bool = false;
override TRANS_B: bool = false;
override ACCUMULATE: bool = false; // C += op(A) @ op(B): C holds a running sum

struct Params {
  m: u32,
  n: u32,
  k: u32,
  stride_a: u32,
  stride_b: u32,
  stride_c: u32,
}

@group(0) @binding(0) var<storage, read> a: array<vec4f>;
@group(0) @binding(1) var<storage, read> b: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

// tile_a[kk * BM / 4 + i] = A[row0 + 4i .. +4, k0 + kk]; tile_b[kk * BN / 4 + j] = B[k0 + kk,
// col0 + 4j .. +4].
var<workgroup> tile_a: array<vec4f, BM * BK / 4u>;
var<workgroup> tile_b: array<vec4f, BK * BN / 4u>;

// The vec4 of a stored [rows, cols] matrix (cols a multiple of 4) at element `base` + row r and
// columns c .. c+3, or zeros when r or c is outside.
fn quad(src: u32, base: u32, r: u32, c4: u32, rows: u32, cols: u32) -> vec4f {
  if (r >= rows || c4 >= cols) { return vec4f(0.0); }
  let i = (base + r * cols + c4) / 4u;
  if (src == 0u) { return a[i]; }
  return b[i];
}

// Stages quad q (of BM * BK / 4) of the A tile at k0.
fn stage_a(q: u32, base: u32, row0: u32, k0: u32) {
  if (TRANS_A) {
    // Stored [K, M]: the quad runs along M, a whole vec4 of the tile.
    let kk = q / (BM / 4u);
    let i = q % (BM / 4u);
    tile_a[q] = quad(0u, base, k0 + kk, row0 + 4u * i, p.k, p.m);
    return;
  }
  // Stored [M, K]: the quad runs along K, one component of four tile vec4s.
  let r = q / (BK / 4u);
  let kk = 4u * (q % (BK / 4u));
  let v = quad(0u, base, row0 + r, k0 + kk, p.m, p.k);
  for (var j = 0u; j < 4u; j++) { tile_a[(kk + j) * (BM / 4u) + r / 4u][r % 4u] = v[j]; }
}

// Stages quad q (of BK * BN / 4) of the B tile at k0.
fn stage_b(q: u32, base: u32, col0: u32, k0: u32) {
  if (TRANS_B) {
    // Stored [N, K]: the quad runs along K, one component of four tile vec4s.
    let col = q / (BK / 4u);
    let kk = 4u * (q % (BK / 4u));
    let v = quad(1u, base, col0 + col, k0 + kk, p.n, p.k);
    for (var j = 0u; j < 4u; j++) { tile_b[(kk + j) * (BN / 4u) + col / 4u][col % 4u] = v[j]; }
    return;
  }
  // Stored [K, N]: the quad runs along N, a whole vec4 of the tile.
  let kk = q / (BN / 4u);
  let j = q % (BN / 4u);
  tile_b[q] = quad(1u, base, k0 + kk, col0 + 4u * j, p.k, p.n);
}

@compute @workgroup_size(BN / 4u, BM / 4u)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let threads = (BN / 4u) * (BM / 4u);
  let row0 = wid.y * BM;
  let col0 = wid.x * BN;
  let a_base = wid.z * p.stride_a;
  let b_base = wid.z * p.stride_b;
  // acc[i] = C[row0 + 4 lid.y + i, col0 + 4 lid.x .. +4].
  var acc = array<vec4f, 4>(vec4f(0.0), vec4f(0.0), vec4f(0.0), vec4f(0.0));
  for (var k0 = 0u; k0 < p.k; k0 += BK) {
    for (var q = li; q < BM * BK / 4u; q += threads) { stage_a(q, a_base, row0, k0); }
    for (var q = li; q < BK * BN / 4u; q += threads) { stage_b(q, b_base, col0, k0); }
    workgroupBarrier();
    for (var kk = 0u; kk < BK; kk++) {
      let av = tile_a[kk * (BM / 4u) + lid.y];
      let bv = tile_b[kk * (BN / 4u) + lid.x];
      acc[0] = fma(vec4f(av.x), bv, acc[0]);
      acc[1] = fma(vec4f(av.y), bv, acc[1]);
      acc[2] = fma(vec4f(av.z), bv, acc[2]);
      acc[3] = fma(vec4f(av.w), bv, acc[3]);
    }
    workgroupBarrier();
  }
  let c_base = wid.z * p.stride_c;
  for (var i = 0u; i < 4u; i++) {
    let row = row0 + 4u * lid.y + i;
    for (var j = 0u; j < 4u; j++) {
      let col = col0 + 4u * lid.x + j;
      if (row < p.m && col < p.n) {
        let at = c_base + row * p.n + col;
        var value = acc[i][j];
        if (ACCUMULATE) { value += c[at]; }
        c[at] = value;
      }
    }
  }
}
