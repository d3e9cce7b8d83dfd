/**
 * Plain-loop CPU reference (f64) of the token sampler for one row of logits: the sampler's
 * uniform number (bit-exact with the GPU hash), the tokens top-k/top-p keep (sorting, the obvious
 * way), the token inverse-CDF sampling picks for a given u, and the tempered log-prob. The rules,
 * ties included, are those of `SamplingParams` in `src/engine/sampler.ts`.
 */

/** A row's sampling settings: the fields of the engine's `SamplingParams` (see the file comment). */
export interface SamplingRule {
  temperature: number;
  topK?: number;
  topP?: number;
}

/** PCG hash (Jarzynski and Olano 2020) of a u32, as the sampler shader computes it. */
export function pcgHash(v: number): number {
  const state = (Math.imul(v, 747796405) + 2891336453) >>> 0;
  const word = Math.imul((state >>> ((state >>> 28) + 4)) ^ state, 277803737) >>> 0;
  return ((word >>> 22) ^ word) >>> 0;
}

/** The sampler's uniform number in [0, 1) for (seed, step): 24 bits of a two-level PCG hash. */
export function samplerUniform(seed: number, step: number): number {
  return (pcgHash((seed + pcgHash(step)) >>> 0) >>> 8) / 16777216;
}

/** Index of the first maximum of `row`. */
function argmax(row: ArrayLike<number>): number {
  let best = 0;
  for (let c = 1; c < row.length; c++) if (row[c] > row[best]) best = c;
  return best;
}

/** Unnormalised sampling weights `exp((z - max) / temperature)` of a row. */
function weights(row: ArrayLike<number>, temperature: number): Float64Array {
  const m = row[argmax(row)];
  return Float64Array.from(row, (z) => Math.exp((z - m) / temperature));
}

/**
 * Whether each token of `row` may be sampled: the argmax alone when greedy, else the tokens with a
 * logit at least the top-k threshold (the k-th largest logit) and the top-p threshold (the logit
 * of the first token, in descending order, where the running weight of the top-k set reaches
 * topP of its total); ties at a threshold are kept.
 */
export function keptTokensRef(row: ArrayLike<number>, params: SamplingRule): boolean[] {
  const { temperature, topK = 0, topP = 1 } = params;
  if (temperature <= 0) return Array.from(row, (_, c) => c === argmax(row));
  const k = Math.trunc(Math.min(Math.max(topK, 0), row.length));
  const order = Array.from(row, (_, c) => c).sort((a, b) => row[b] - row[a]);
  let threshold = k >= 1 && k < row.length ? row[order[k - 1]] : -Infinity;
  if (topP < 1) {
    const w = weights(row, temperature);
    const kept = order.filter((c) => row[c] >= threshold);
    const need = topP * kept.reduce((s, c) => s + w[c], 0);
    let running = 0;
    for (const c of kept) {
      running += w[c];
      threshold = row[c];
      if (running >= need) break;
    }
  }
  return Array.from(row, (z) => z >= threshold);
}

/**
 * The token sampling picks from `row` with uniform number `u`: the argmax when greedy, else the
 * first kept token, in index order, whose running weight exceeds `u` times the kept weight (the
 * last kept one of positive weight if rounding leaves none).
 */
export function sampleRowRef(row: ArrayLike<number>, params: SamplingRule, u: number): number {
  if (params.temperature <= 0) return argmax(row);
  const kept = keptTokensRef(row, params);
  const w = weights(row, params.temperature);
  const target = u * w.reduce((s, x, c) => s + (kept[c] ? x : 0), 0);
  let running = 0;
  let token = -1;
  for (let c = 0; c < row.length; c++) {
    if (!kept[c] || w[c] === 0) continue;
    running += w[c];
    token = c;
    if (running > target) break;
  }
  return token;
}

/** `log_softmax(row / temperature)[token]` over the full row; temperature <= 0 reads as 1. */
export function temperedLogprobRef(
  row: ArrayLike<number>,
  temperature: number,
  token: number,
): number {
  const t = temperature > 0 ? temperature : 1;
  const m = row[argmax(row)];
  const logSum = Math.log(weights(row, t).reduce((s, x) => s + x, 0));
  return (row[token] - m) / t - logSum;
}
