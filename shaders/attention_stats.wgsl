// The per-row statistics attention's backward kernels read (attention.wgsl, attention_texture.wgsl
// and flash_attention.wgsl alike): stats[row, h] = (lse, delta), the forward's log-sum-exp copied
// from its output and delta = sum over the head dim of d_o * o.
// Shapes: fwd = the attention forward's output, o [B, T, H, D] then from element p.lse_at its
// lse [B, T, H]; d_o [B, T, H, D]; stats (out) [B, T, H, 2].
// Bindings: fwd, d_o (read), stats (read_write), params.
// Grid: one invocation per (position, head) pair i = (b * T + t) * H + h, spread over x and y.

override WG: u32 = 64u;

struct Params {
  rows: u32, // B * T * H
  head_dim: u32,
  lse_at: u32,
}

@group(0) @binding(0) var<storage, read> fwd: array<f32>;
@group(0) @binding(1) var<storage, read> d_o: array<f32>;
@group(0) @binding(2) var<storage, read_write> stats: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= p.rows) { return; }
  let at = i * p.head_dim;
  // Four products at a time, summed before they join the total (the order the register kernels
  // summed delta in when they computed it themselves).
  var delta = 0.0;
  for (var d0 = 0u; d0 < p.head_dim; d0 += 4u) {
    var quad = 0.0;
    for (var d = d0; d < min(d0 + 4u, p.head_dim); d++) { quad += fwd[at + d] * d_o[at + d]; }
    delta += quad;
  }
  stats[2u * i] = fwd[p.lse_at + i];
  stats[2u * i + 1u] = delta;
}
