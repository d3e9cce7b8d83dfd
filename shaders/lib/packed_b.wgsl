// Reading a matmul's B from a texture: linear texel addressing, and the packed layout of
// pack_weight.wgsl; shared by matmul_texture.wgsl and matmul_texture_gemv.wgsl, which pull it in
// with the line `// #include packed_b`. Needs in the including shader: `override TEX_W: u32` and
// B's texture `tb` (a global: GLSL, which the GL backend emits, takes no storage texture as a
// function parameter).

// Texel i of B's texture, texel t at (t % TEX_W, t / TEX_W).
fn texel_b(i: u32) -> vec4f {
  return textureLoad(tb, texel_at(i));
}

// Where texel i of a texture TEX_W texels wide sits.
fn texel_at(i: u32) -> vec2u {
  return vec2u(i % TEX_W, i / TEX_W);
}

// Packed op(B) at four values of k and an invocation's four columns of a strip, whose texels are
// 8 apart from texel i: column j of the result holds k's value kk at row kk.
fn packed_columns(i: u32) -> mat4x4f {
  return transpose(mat4x4f(texel_b(i), texel_b(i + 8u), texel_b(i + 16u), texel_b(i + 24u)));
}

// The texel of strip s (32 columns: 4 of invocation l's at 8 texels apart) at the four values
// of k from 4 kq, in a packed texture with k4 texels per column, as invocation l reads it.
fn packed_strip_texel(s: u32, kq: u32, k4: u32, l: u32) -> u32 {
  return ((s / 4u) * k4 + kq) * 128u + 32u * (s % 4u) + l;
}

// The texel of row r, elements c .. c+3 (c a multiple of 4), of a matrix whose rows hold n4
// texels each, packed by rows (pack_weight.wgsl with TRANS_B): row r is column r % 4 of
// invocation (r % 32) / 4 in strip r / 32.
fn packed_row_texel(r: u32, c: u32, n4: u32) -> u32 {
  return packed_strip_texel(r / 32u, c / 4u, n4, (r % 32u) / 4u) + 8u * (r % 4u);
}
