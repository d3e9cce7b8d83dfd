// The row-group steps shared by the register-blocked matmuls (matmul_regblock.wgsl,
// matmul_texture.wgsl); a shader pulls them in with the line `// #include matmul_row_groups`.
// Needs in the including shader: `override ROW_GROUPS: u32` (1..8 groups of 4 rows), `Params p`
// with m and n, `var<private> acc: array<vec4f, 128>`,
// `row0`, `column_of(v)` (the first column of quad v: acc[4r + v] holds C[row0 + r, column_of(v)
// .. +4]), and `multiply_group(g, k0, kv)`, `store_group(c_base, g)`, `store_row(i, col, row)`.
// Unrolled by hand with override guards: loops over the block would spill it to memory.

// Rows row0+4g .. +4 (those below M) at the columns of quad v (when they start below N).
fn store_block(c_base: u32, g: u32, v: u32) {
  let col = column_of(v);
  if (col >= p.n) { return; }
  let r = row0 + 4u * g;
  let i = c_base + r * p.n + col;
  if (r < p.m) { store_row(i, col, acc[16u * g + v]); }
  if (r + 1u < p.m) { store_row(i + p.n, col, acc[16u * g + 4u + v]); }
  if (r + 2u < p.m) { store_row(i + 2u * p.n, col, acc[16u * g + 8u + v]); }
  if (r + 3u < p.m) { store_row(i + 3u * p.n, col, acc[16u * g + 12u + v]); }
}

// One step of k (four values from k0, kv of them inside K) for every row group.
fn multiply(k0: u32, kv: u32) {
  multiply_group(0u, k0, kv);
  if (ROW_GROUPS > 1u) { multiply_group(1u, k0, kv); }
  if (ROW_GROUPS > 2u) { multiply_group(2u, k0, kv); }
  if (ROW_GROUPS > 3u) { multiply_group(3u, k0, kv); }
  if (ROW_GROUPS > 4u) { multiply_group(4u, k0, kv); }
  if (ROW_GROUPS > 5u) { multiply_group(5u, k0, kv); }
  if (ROW_GROUPS > 6u) { multiply_group(6u, k0, kv); }
  if (ROW_GROUPS > 7u) { multiply_group(7u, k0, kv); }
}

fn store(c_base: u32) {
  store_group(c_base, 0u);
  if (ROW_GROUPS > 1u) { store_group(c_base, 1u); }
  if (ROW_GROUPS > 2u) { store_group(c_base, 2u); }
  if (ROW_GROUPS > 3u) { store_group(c_base, 3u); }
  if (ROW_GROUPS > 4u) { store_group(c_base, 4u); }
  if (ROW_GROUPS > 5u) { store_group(c_base, 5u); }
  if (ROW_GROUPS > 6u) { store_group(c_base, 6u); }
  if (ROW_GROUPS > 7u) { store_group(c_base, 7u); }
}
