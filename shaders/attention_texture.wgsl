// Causal self-attention (forward and backward) reading q, k, v and d_o from rgba32float
// textures, for CPU adapters, where a texel load costs a fraction of a storage load (llvmpipe
// runs those a lane at a time) and brings four head-dim elements. The kernels are
// shaders/lib/attention_core.wgsl's (see there for the algorithm, shapes and bindings).
// The op copies each operand's buffer into a texture before the launch, as linear texels: element
// e is component e % 4 of texel e / 4, and texel t sits at (t % TEX_W, t / TEX_W); so the head
// dim must be a multiple of 4.

// #include attention_core
// #include attention_params
// #include softcap

override TEX_W: u32 = 8192u; // texels per texture row, a power of two

@group(0) @binding(0) var q: texture_storage_2d<rgba32float, read>;
@group(0) @binding(1) var k: texture_storage_2d<rgba32float, read>;
@group(0) @binding(2) var v: texture_storage_2d<rgba32float, read>;
@group(0) @binding(4) var d_o: texture_storage_2d<rgba32float, read>;

// Elements e .. e+3 (e a multiple of 4) of tensor src.
fn texel(src: u32, e: u32) -> vec4f {
  let t = e / 4u;
  let at = vec2u(t % TEX_W, t / TEX_W);
  switch src {
    case SRC_Q: { return textureLoad(q, at) * p.scale; }
    case SRC_K: { return textureLoad(k, at); }
    case SRC_V: { return textureLoad(v, at); }
    default: { return textureLoad(d_o, at); }
  }
}

// Column dd: element d0 + dd of positions t .. t+3 (see attention_core).
fn quads(src: u32, t: u32, head: u32, d0: u32) -> mat4x4f {
  let heads = heads_of(src);
  return transpose(mat4x4f(
    texel(src, index_of(t, heads, head, d0)),
    texel(src, index_of(t + 1u, heads, head, d0)),
    texel(src, index_of(t + 2u, heads, head, d0)),
    texel(src, index_of(t + 3u, heads, head, d0)),
  ));
}
