// Skinny matmul for GPUs (decode, M of 1 to 64): C[b] = op(A[b]) @ op(B[b]) where op transposes
// when TRANS_A / TRANS_B (C[b] += ... with ACCUMULATE). The register-blocked kernels give such a
// problem a few hundred invocations, each walking all of K; here a workgroup computes ROWS rows x
// COLS columns of C and its LANES x COLS invocations split K: invocation (lane, column) sums
// k = lane, lane + LANES, ... for each row, so neighbouring lanes read neighbouring k (contiguous
// in A and in B^T: the decode layout x W^T), then the workgroup adds up the LANES partial sums
// of each output in workgroup memory. Any M, N, K and layout; rows past M and columns past N are
// neither read nor stored.
//
// Bindings: a (read)  A [batch][M, K], or [batch][K, M] with TRANS_A; batch stride p.stride_a
//           b (read)  B [batch][K, N], or [batch][N, K] with TRANS_B; batch stride p.stride_b
//           c (write) C [batch][M, N], batch stride p.stride_c
//           p (uniform) Params (a stride of 0 shares that operand across the batch)
// Grid: x = ceil(N / COLS), y = ceil(M / ROWS), z = batch.

override ROWS: u32 = 4u; // 1..8
override COLS: u32 = 8u; // ROWS * COLS * LANES <= 2048
override LANES: u32 = 32u; // a power of two
override TRANS_A: bool = false;
override TRANS_B: bool = false;
override ACCUMULATE: bool = false;

// #include matmul_params
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;

// partial[(r * COLS + column) * LANES + lane]: one lane's sum for row r of the workgroup.
var<workgroup> partial: array<f32, 2048>;

fn a_at(base: u32, row: u32, k: u32) -> f32 {
  if (TRANS_A) { return a[base + k * p.m + row]; }
  return a[base + row * p.k + k];
}

fn b_at(base: u32, k: u32, col: u32) -> f32 {
  if (TRANS_B) { return b[base + col * p.k + k]; }
  return b[base + k * p.n + col];
}

@compute @workgroup_size(LANES, COLS)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let lane = lid.x;
  let col = wid.x * COLS + lid.y;
  let row0 = wid.y * ROWS;
  let rows = min(ROWS, p.m - row0);
  let a_base = wid.z * p.stride_a;
  let b_base = wid.z * p.stride_b;
  var sums: array<f32, 8>;
  if (col < p.n) {
    for (var k = lane; k < p.k; k += LANES) {
      let bv = b_at(b_base, k, col);
      for (var r = 0u; r < ROWS; r++) {
        if (r < rows) { sums[r] += a_at(a_base, row0 + r, k) * bv; }
      }
    }
  }
  for (var r = 0u; r < ROWS; r++) {
    partial[(r * COLS + lid.y) * LANES + lane] = sums[r];
  }
  workgroupBarrier();
  for (var half = LANES / 2u; half > 0u; half /= 2u) {
    if (lane < half) {
      for (var r = 0u; r < ROWS; r++) {
        let i = (r * COLS + lid.y) * LANES + lane;
        partial[i] += partial[i + half];
      }
    }
    workgroupBarrier();
  }
  if (lane != 0u || col >= p.n) { return; }
  let c_base = wid.z * p.stride_c;
  for (var r = 0u; r < rows; r++) {
    let i = c_base + (row0 + r) * p.n + col;
    var value = partial[(r * COLS + lid.y) * LANES];
    if (ACCUMULATE) { value += c[i]; }
    c[i] = value;
  }
}
