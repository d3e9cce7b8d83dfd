/**
 * Plain-loop f64 CPU reference of `normedQkvGemv` (`src/ops/normed_qkv_gemv.ts`): HF's RMSNorm,
 * then each weight's product (stored [n_i, k]) plus its bias, the products' columns side by side.
 */

import { rmsNormRef } from "./layernorm.ts";
import { matmulRef } from "./matmul.ts";

/**
 * `[x Wq^T + bq, x Wk^T + bk, x Wv^T + bv]` (any number of weights, biases optional) in f64 with
 * x = rmsNorm(h, gamma, eps, weightOffset), rows of `k` values; `ns` the weights' rows.
 */
export function normedQkvGemvRef(
  h: ArrayLike<number>,
  gamma: ArrayLike<number>,
  weights: readonly ArrayLike<number>[],
  biases: readonly ArrayLike<number>[] | undefined,
  { k, ns, eps, weightOffset = 0 }: {
    k: number;
    ns: readonly number[];
    eps: number;
    weightOffset?: number;
  },
): Float64Array {
  const x = rmsNormRef(h, gamma, k, eps, weightOffset);
  const m = h.length / k;
  const width = ns.reduce((a, b) => a + b, 0);
  const out = new Float64Array(m * width);
  let first = 0;
  weights.forEach((w, i) => {
    const n = ns[i];
    const y = matmulRef(x, w, { m, k, n, transB: true });
    for (let r = 0; r < m; r++) {
      for (let j = 0; j < n; j++) out[r * width + first + j] = y[r * n + j] + (biases?.[i][j] ?? 0);
    }
    first += n;
  });
  return out;
}
