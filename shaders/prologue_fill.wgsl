// Fills a matmul's A operand texture with a function of its producers' buffers, computed as it is
// written (prologue_matmul.ts): the RMSNorm, or the gated activation, that would otherwise be a
// pass of its own writing a buffer that a copy_to_texture dispatch then copies. A is [rows, cols]
// (cols a multiple of 4) stored as linear texels: texel t = row * cols / 4 + c holds elements
// 4c .. 4c+3 of its row and sits at (t % TEX_W, t / TEX_W), as copy_to_texture.wgsl writes them.
//
// rms_norm_rows: one invocation per row (as layernorm.wgsl's forward_rows: no workgroup memory,
//   no barrier, four columns per load): A = x * rsqrt(mean(x^2) + eps) * (w + WEIGHT_OFFSET), HF's
//   order (Gemma's RMSNorm: WEIGHT_OFFSET 1).
//   Bindings: x [rows, cols], w [cols] (the norm's weight). Grid: ceil(rows / WG) workgroups.
// gated: one invocation per texel: A = f(gate) * up (OP: the codes of lib/activation.wgsl, 6 silu).
//   Bindings: x the gate [rows, cols], w up [rows, cols]. Grid: ceil(texels / WG) workgroups.
// Grids of more workgroups than x holds continue along y (index = gid.x + gid.y * nwg.x * WG).
// Bindings (both): x (read), w (read), out (storage texture), params.
// #include activation

override TEX_W: u32 = 8192u;
override OP: u32 = 6u;
override WG: u32 = 64u;
override WEIGHT_OFFSET: f32 = 0.0;

struct Params {
  rows: u32,
  cols: u32,
  eps: f32,
}

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read> w: array<vec4f>;
@group(0) @binding(2) var out: texture_storage_2d<rgba32float, write>;
@group(0) @binding(3) var<uniform> p: Params;

fn store_texel(t: u32, value: vec4f) {
  textureStore(out, vec2u(t % TEX_W, t / TEX_W), value);
}

@compute @workgroup_size(WG)
fn rms_norm_rows(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let row = gid.x + gid.y * nwg.x * WG;
  if (row >= p.rows) { return; }
  let quads = p.cols / 4u;
  let base = row * quads;
  var ss = vec4f(0.0);
  for (var c = 0u; c < quads; c++) {
    let v = x[base + c];
    ss += v * v;
  }
  let rstd = inverseSqrt((ss.x + ss.y + ss.z + ss.w) / f32(p.cols) + p.eps);
  for (var c = 0u; c < quads; c++) {
    store_texel(base + c, (x[base + c] * rstd) * (w[c] + WEIGHT_OFFSET));
  }
}

@compute @workgroup_size(WG)
fn gated(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let t = gid.x + gid.y * nwg.x * WG;
  if (t >= p.rows * (p.cols / 4u)) { return; }
  store_texel(t, activation4(x[t]) * w[t]);
}
