// Causal self-attention (forward and backward) reading q, k, v and d_o from storage buffers:
// any head dim. The kernels are shaders/lib/attention_core.wgsl's (see there for the algorithm,
// shapes and bindings); this file binds the operands and loads them for it.

// #include attention_core
// #include attention_params
// #include softcap

@group(0) @binding(0) var<storage, read> q: array<f32>;
@group(0) @binding(1) var<storage, read> k: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read> d_o: array<f32>;

// Element i of tensor src.
fn read_at(src: u32, i: u32) -> f32 {
  switch src {
    case SRC_Q: { return q[i] * p.scale; }
    case SRC_K: { return k[i]; }
    case SRC_V: { return v[i]; }
    default: { return d_o[i]; }
  }
}

// Elements d0 .. d0+3 of position t, head `head` of src; 0 past the head dim.
fn position_quad(src: u32, t: u32, head: u32, d0: u32) -> vec4f {
  let at = index_of(t, heads_of(src), head, 0u);
  let last = p.head_dim - 1u;
  return vec4f(
    read_at(src, at + min(d0, last)),
    select(0.0, read_at(src, at + min(d0 + 1u, last)), d0 + 1u < p.head_dim),
    select(0.0, read_at(src, at + min(d0 + 2u, last)), d0 + 2u < p.head_dim),
    select(0.0, read_at(src, at + min(d0 + 3u, last)), d0 + 3u < p.head_dim),
  );
}

// Column dd: element d0 + dd of positions t .. t+3 (see attention_core).
fn quads(src: u32, t: u32, head: u32, d0: u32) -> mat4x4f {
  return transpose(mat4x4f(
    position_quad(src, t, head, d0),
    position_quad(src, t + 1u, head, d0),
    position_quad(src, t + 2u, head, d0),
    position_quad(src, t + 3u, head, d0),
  ));
}
