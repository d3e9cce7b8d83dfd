/**
 * f64 CPU reference of the optimizer: global gradient norm, clip scale and one AdamW step
 * (PyTorch semantics), for tests of `src/trainer/`. Plain loops; no batching of parameters.
 */

/** Hyper-parameters of {@link adamwStepRef} (all given; no defaults here). */
export interface AdamWRefOptions {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
}

/** L2 norm of all `grads` taken together as one vector. */
export function gradNormRef(grads: readonly ArrayLike<number>[]): number {
  let sum = 0;
  for (const g of grads) for (let i = 0; i < g.length; i++) sum += g[i] * g[i];
  return Math.sqrt(sum);
}

/** The gradient scale for `norm`: min(1, maxNorm / (norm + 1e-6)), or 1 without `maxNorm`. */
export function clipScaleRef(norm: number, maxNorm?: number): number {
  return maxNorm === undefined ? 1 : Math.min(1, maxNorm / (norm + 1e-6));
}

/**
 * One AdamW step at step number `t` (1-based) on `param`, `m` and `v` in place, with the
 * gradient `grad` multiplied by `gradScale`:
 * m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
 * param -= lr ((m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps) + weightDecay param).
 */
export function adamwStepRef(
  param: Float64Array,
  grad: ArrayLike<number>,
  m: Float64Array,
  v: Float64Array,
  t: number,
  o: AdamWRefOptions,
  gradScale = 1,
): void {
  const bc1 = 1 - o.beta1 ** t;
  const bc2 = 1 - o.beta2 ** t;
  for (let i = 0; i < param.length; i++) {
    const g = grad[i] * gradScale;
    m[i] = o.beta1 * m[i] + (1 - o.beta1) * g;
    v[i] = o.beta2 * v[i] + (1 - o.beta2) * g * g;
    const update = m[i] / bc1 / (Math.sqrt(v[i] / bc2) + o.eps);
    param[i] -= o.lr * (update + o.weightDecay * param[i]);
  }
}
