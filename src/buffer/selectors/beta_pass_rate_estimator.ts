/**
 * BOTS' pass-rate estimator (Trinity-RFT's `InterpolationBetaPREstimator`): a
 * Beta(alpha, beta) belief about each task's pass rate. Each update discounts every belief by
 * `lamb` and adds `m` pseudo-trials: a task observed this step gets its observed pass rate
 * (weight 1 - rho) and a task not observed gets an interpolated prior (weight rho), read off two
 * offline anchor features (e.g. a weak and a strong model's pass rates) at a "capability"
 * coefficient fitted to the observed tasks and smoothed over steps:
 *
 *   cap     = (mean observed rate - mean anchor0) / (mean anchor1 - mean anchor0), smoothed
 *   p~_i    = clip(anchor0_i + (anchor1_i - anchor0_i) * cap, 0, 1)   (observed: their rate)
 *   alpha_i <- (1 - lamb) alpha_i + lamb + (1 - rho) s_i + rho p~_i m
 *   beta_i  <- (1 - lamb) beta_i  + lamb + (1 - rho) f_i + rho (1 - p~_i) m
 *
 * with s_i = rate_i m and f_i = (1 - rate_i) m for an observed task, 0 otherwise. Differs from
 * Trinity: a task observed twice in one update counts once with its mean rate (Trinity keeps the
 * last); the state (beliefs, cap, rho) is saved with a run (Trinity saves only its draw count).
 */

/** The estimator's knobs (`data_selector.kwargs`). */
export interface BetaEstimatorOptions {
  /** Pseudo-trials per update (Trinity's `m`, the rollouts per task). */
  m: number;
  /** Discount of the old belief per update. */
  lamb: number;
  /** Weight of the interpolated prior. */
  rho: number;
  /** Smoothing of the capability coefficient over updates. */
  capDiscount: number;
  /** Halve rho whenever the prior misses the observed rates by 0.25 or more on average. */
  adaptiveRho: boolean;
}

/** What the estimator learned, JSON-serialisable. */
export interface BetaEstimatorState {
  alphas: number[];
  betas: number[];
  /** The capability coefficient; null before the first update. */
  cap: number | null;
  rho: number;
}

/** Beta beliefs about the pass rate of `anchors.length` tasks. */
export class BetaPassRateEstimator {
  #alphas: number[];
  #betas: number[];
  #cap: number | null = null;
  #rho: number;

  /** `anchors[i]` is task i's pair of anchor features; every belief starts at Beta(1, 1). */
  constructor(
    readonly anchors: readonly (readonly [number, number])[],
    readonly options: BetaEstimatorOptions,
  ) {
    this.#alphas = anchors.map(() => 1);
    this.#betas = anchors.map(() => 1);
    this.#rho = options.rho;
  }

  /** The mean pass rate alpha / (alpha + beta) of task `i`. */
  mean(i: number): number {
    return this.#alphas[i] / (this.#alphas[i] + this.#betas[i]);
  }

  /** Task `i`'s (alpha, beta). */
  belief(i: number): [number, number] {
    return [this.#alphas[i], this.#betas[i]];
  }

  /** One update from the observed pass rates `rates[k]` of tasks `indices[k]`. */
  update(indices: readonly number[], rates: readonly number[]): void {
    const observed = new Map<number, number[]>();
    indices.forEach((index, k) => observed.set(index, [...observed.get(index) ?? [], rates[k]]));
    if (observed.size === 0) return;
    const rate = new Map([...observed].map(([i, r]) => [i, average(r)]));
    const seen = [...rate.keys()];
    const anchor0 = average(seen.map((i) => this.anchors[i][0]));
    const anchor1 = average(seen.map((i) => this.anchors[i][1]));
    const capNow = (average([...rate.values()]) - anchor0) /
      (anchor1 - anchor0 + 1e-6);
    const { capDiscount, m, lamb } = this.options;
    this.#cap = this.#cap === null ? capNow : capDiscount * this.#cap + (1 - capDiscount) * capNow;
    const prior = this.anchors.map(([a0, a1]) =>
      Math.min(1, Math.max(0, a0 + (a1 - a0) * this.#cap!))
    );
    if (this.options.adaptiveRho) {
      const miss = average(seen.map((i) => Math.abs(prior[i] - rate.get(i)!)));
      if (miss >= 0.25) this.#rho *= 0.5;
    }
    const rho = this.#rho;
    for (let i = 0; i < this.anchors.length; i++) {
      const r = rate.get(i);
      const p = r ?? prior[i];
      const [s, f] = r === undefined ? [0, 0] : [r * m, (1 - r) * m];
      this.#alphas[i] = (1 - lamb) * this.#alphas[i] + lamb + (1 - rho) * s + rho * p * m;
      this.#betas[i] = (1 - lamb) * this.#betas[i] + lamb + (1 - rho) * f + rho * (1 - p) * m;
    }
  }

  /** The beliefs, capability and rho, to save. */
  state(): BetaEstimatorState {
    return { alphas: [...this.#alphas], betas: [...this.#betas], cap: this.#cap, rho: this.#rho };
  }

  /** Back to a saved state; throws when it holds another number of tasks. */
  restore(state: BetaEstimatorState): void {
    const n = this.anchors.length;
    if (state?.alphas?.length !== n || state?.betas?.length !== n) {
      throw new Error(
        `expected beliefs about ${n} tasks, found ${state?.alphas?.length ?? "none"}`,
      );
    }
    this.#alphas = [...state.alphas];
    this.#betas = [...state.betas];
    this.#cap = state.cap;
    this.#rho = state.rho;
  }
}

function average(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}
