// Workgroup-memory tiled matmul: C[b] = op(A[b]) @ op(B[b]) where op transposes when TRANS_A /
// TRANS_B. A workgroup computes a BM x BN tile of C, staging BM x BK of A and BK x BN of B in
// workgroup memory per step; each invocation accumulates a 4x4 block in registers. Any M, N, K:
// staged values past the edges are zeros and stores past M or N are skipped.
//
// Bindings: a (read)  A [batch][M, K], or [batch][K, M] with TRANS_A; batch stride p.stride_a
//           b (read)  B [batch][K, N], or [batch][N, K] with TRANS_B; batch stride p.stride_b
//                     (stride 0: one B shared by every batch)
//           c (write) C [batch][M, N], batch stride p.stride_c
//           p (uniform) Params
// Grid: x = ceil(N / BN), y = ceil(M / BM), z = batch. Workgroup: (BN / 4, BM / 4).

override BM: u32 = 64u; // multiple of 4
override BN: u32 = 64u; // multiple of 4
override BK: u32 = 16u;
override TRANS_A: bool = false;
override TRANS_B: bool = false;
override ACCUMULATE: bool = false; // C += op(A) @ op(B): C holds a running sum

const TM = 4u;
const TN = 4u;

// #include matmul_params
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;

var<workgroup> tile_a: array<f32, BM * BK>; // [BM][BK]
var<workgroup> tile_b: array<f32, BK * BN>; // [BK][BN]

// A[row, kk] of batch base `base`, or 0 outside M x K.
fn read_a(base: u32, row: u32, kk: u32) -> f32 {
  if (row >= p.m || kk >= p.k) { return 0.0; }
  if (TRANS_A) { return a[base + kk * p.m + row]; }
  return a[base + row * p.k + kk];
}

// B[kk, col] of batch base `base`, or 0 outside K x N.
fn read_b(base: u32, kk: u32, col: u32) -> f32 {
  if (kk >= p.k || col >= p.n) { return 0.0; }
  if (TRANS_B) { return b[base + col * p.k + kk]; }
  return b[base + kk * p.n + col];
}

@compute @workgroup_size(BN / TN, BM / TM)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let threads = (BN / TN) * (BM / TM);
  let row0 = wid.y * BM;
  let col0 = wid.x * BN;
  let a_base = wid.z * p.stride_a;
  let b_base = wid.z * p.stride_b;
  var acc: array<f32, TM * TN>;
  for (var k0 = 0u; k0 < p.k; k0 += BK) {
    for (var i = li; i < BM * BK; i += threads) {
      tile_a[i] = read_a(a_base, row0 + i / BK, k0 + i % BK);
    }
    for (var i = li; i < BK * BN; i += threads) {
      tile_b[i] = read_b(b_base, k0 + i / BN, col0 + i % BN);
    }
    workgroupBarrier();
    for (var kk = 0u; kk < BK; kk++) {
      var bv: array<f32, TN>;
      for (var j = 0u; j < TN; j++) { bv[j] = tile_b[kk * BN + lid.x * TN + j]; }
      for (var i = 0u; i < TM; i++) {
        let av = tile_a[(lid.y * TM + i) * BK + kk];
        for (var j = 0u; j < TN; j++) { acc[i * TN + j] = fma(av, bv[j], acc[i * TN + j]); }
      }
    }
    workgroupBarrier();
  }
  let c_base = wid.z * p.stride_c;
  for (var i = 0u; i < TM; i++) {
    let row = row0 + lid.y * TM + i;
    for (var j = 0u; j < TN; j++) {
      let col = col0 + lid.x * TN + j;
      if (row < p.m && col < p.n) {
        let at = c_base + row * p.n + col;
        var value = acc[i * TN + j];
        if (ACCUMULATE) { value += c[at]; }
        c[at] = value;
      }
    }
  }
}
