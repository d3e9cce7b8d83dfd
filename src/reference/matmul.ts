/**
 * Plain-loop f64 CPU reference of `matmul`: `batch` products op(A) [m, k] by op(B) [k, n], with
 * optional transposes and per-operand batch strides (0 shares one matrix across the batch).
 * Slow by design; tests compare the GPU kernels against it.
 */

/** Dimensions and layout of a reference matmul (a `MatmulProblem` fits). */
export interface MatmulRefShape {
  m: number;
  k: number;
  n: number;
  batch?: number;
  /** A is stored [k, m]. */
  transA?: boolean;
  /** B is stored [n, k]. */
  transB?: boolean;
  /** Elements between batches of A; default m*k, 0 to share A. */
  strideA?: number;
  /** Elements between batches of B; default k*n, 0 to share B. */
  strideB?: number;
}

/** `op(a) @ op(b)` per batch in f64, as [batch, m, n]. */
export function matmulRef(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  shape: MatmulRefShape,
): Float64Array {
  const { m, k, n, batch = 1, transA = false, transB = false } = shape;
  const strideA = shape.strideA ?? m * k;
  const strideB = shape.strideB ?? k * n;
  const out = new Float64Array(batch * m * n);
  for (let z = 0; z < batch; z++) {
    const ao = z * strideA;
    const bo = z * strideB;
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let sum = 0;
        for (let p = 0; p < k; p++) {
          const av = transA ? a[ao + p * m + i] : a[ao + i * k + p];
          const bv = transB ? b[bo + j * k + p] : b[bo + p * n + j];
          sum += av * bv;
        }
        out[(z * m + i) * n + j] = sum;
      }
    }
  }
  return out;
}
