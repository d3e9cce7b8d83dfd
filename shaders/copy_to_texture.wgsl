// Copies the first `texels` vec4s of a buffer into an rgba32float storage texture as linear
// texels (texel t at (t % TEX_W, t / TEX_W)): the fill of a small operand texture as a dispatch,
// which stays inside the compute pass, where a copy command ends the pass (on lavapipe each copy
// command costs ~55 us whatever its size, and ending and beginning passes costs the encoder
// more). Large fills stay copy commands: this kernel loads its buffer a lane at a time on CPU
// adapters.
//
// Bindings: src (read) the values as vec4s
//           out (storage texture) the operand texture, TEX_W texels wide
//           p (uniform) Params
// Grid: x = ceil(texels / 64).

override TEX_W: u32 = 8192u;

struct Params {
  texels: u32,
}

@group(0) @binding(0) var<storage, read> src: array<vec4f>;
@group(0) @binding(1) var out: texture_storage_2d<rgba32float, write>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let t = gid.x;
  if (t >= p.texels) { return; }
  textureStore(out, vec2u(t % TEX_W, t / TEX_W), src[t]);
}
