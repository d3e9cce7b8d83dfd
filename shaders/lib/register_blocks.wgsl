// 4 x 4 register blocks kept as four vec4 rows (the workgroup-tile matmuls, flash attention).

// The 4 x 4 block q of C plus the outer product of a row quad av and a column quad bv:
// q[i] + av[i] * bv. Blocks are passed and returned by value, every index literal, so that a GPU
// compiler keeps the 64 accumulators in registers (a private array indexed through a helper's
// parameter ran ~10x slower than the 4 x 4 kernel on an H100).
fn outer4(q: array<vec4f, 4>, av: vec4f, bv: vec4f) -> array<vec4f, 4> {
  return array<vec4f, 4>(
    fma(vec4f(av.x), bv, q[0]),
    fma(vec4f(av.y), bv, q[1]),
    fma(vec4f(av.z), bv, q[2]),
    fma(vec4f(av.w), bv, q[3]),
  );
}
