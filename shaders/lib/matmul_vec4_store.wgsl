// Stores of C as vec4s, shared by matmul_texture.wgsl and matmul_texture_gemv.wgsl; a shader
// pulls them in with the line `// #include matmul_vec4_store`. Needs in the including shader:
// `c: array<vec4f>` (C), `Params p` with n, and `override VEC4_C: bool`, `override ACCUMULATE:
// bool`.

// C element i (a scalar access into the vec4 array).
fn load_one(i: u32) -> f32 {
  return c[i / 4u][i % 4u];
}

fn store_one(i: u32, value: f32) {
  c[i / 4u][i % 4u] = value;
}

// Four values of C from element i, at column col of a row. With VEC4_C one vec4 store (i is a
// multiple of 4 and col+3 < N). Otherwise columns >= N are redirected to column N-1 with its own
// value, so the stores need no branches (see matmul_regblock.wgsl); with ACCUMULATE every old
// value is read before the first store, so a redirected store writes the same sum again.
fn store_row(i: u32, col: u32, row: vec4f) {
  if (VEC4_C) {
    var value = row;
    if (ACCUMULATE) { value += c[i / 4u]; }
    c[i / 4u] = value;
    return;
  }
  let last = min(p.n - 1u - col, 3u);
  let at = vec4u(i, i + min(1u, last), i + min(2u, last), i + min(3u, last));
  var value = vec4f(row.x, row[min(1u, last)], row[min(2u, last)], row[min(3u, last)]);
  if (ACCUMULATE) {
    value += vec4f(load_one(at.x), load_one(at.y), load_one(at.z), load_one(at.w));
  }
  store_one(at.x, value.x);
  store_one(at.y, value.y);
  store_one(at.z, value.z);
  store_one(at.w, value.w);
}
