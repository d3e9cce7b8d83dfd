// The params and the bindings every attention kernel shares (attention.wgsl,
// attention_texture.wgsl, flash_attention.wgsl); the including shader binds q, k, v (0..2) and
// d_o (4) as it reads them.

struct Params {
  seq: u32,
  heads: u32,
  kv_heads: u32,
  head_dim: u32,
  scale: f32,
  window: u32, // 0: none
  lse_at: u32, // forward: first element of the lse rows in out
  dv_at: u32, // backward_kv (flash): first element of dv in out
  softcap: f32, // scores become softcap * tanh(score / softcap); 0: none (register kernels only)
}

@group(0) @binding(3) var<storage, read> segment_ids: array<i32>;
@group(0) @binding(5) var<storage, read> stats: array<f32>;
@group(0) @binding(6) var<storage, read_write> out: array<f32>;
@group(0) @binding(7) var<uniform> p: Params;
