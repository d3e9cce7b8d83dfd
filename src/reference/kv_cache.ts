/**
 * Plain-loop CPU references of the KV-cache ops: `writeKvCacheRef` (the row scatter) and
 * `cachedAttentionRef` (f64, materialising each query row's scores). Tests compare
 * `writeKvCache` and `cachedAttention` against them.
 */

/**
 * Sizes of a KV-cache problem: caches [slots, maxLen, kvHeads, headDim], new tokens and queries
 * [slots, tokens, *, headDim], positions [slots, tokens].
 */
export interface KvCacheShape {
  slots: number;
  tokens: number;
  maxLen: number;
  /** Query heads; kvHeads divides it (query head h uses kv head floor(h / (heads / kvHeads))). */
  heads: number;
  kvHeads: number;
  headDim: number;
}

/**
 * A copy of `cache` with row `positions[s, t]` of slot s set to `x[s, t]` for every (s, t) whose
 * position lies in [0, maxLen); later tokens win over earlier ones at the same position.
 */
export function writeKvCacheRef(
  cache: ArrayLike<number>,
  x: ArrayLike<number>,
  positions: ArrayLike<number>,
  shape: KvCacheShape,
): Float32Array<ArrayBuffer> {
  const { slots, tokens, maxLen, kvHeads, headDim } = shape;
  const width = kvHeads * headDim;
  const out = Float32Array.from(cache);
  for (let s = 0; s < slots; s++) {
    for (let t = 0; t < tokens; t++) {
      const pos = positions[s * tokens + t];
      if (pos < 0 || pos >= maxLen) continue;
      for (let i = 0; i < width; i++) {
        out[(s * maxLen + pos) * width + i] = x[(s * tokens + t) * width + i];
      }
    }
  }
  return out;
}

/**
 * Attention output [slots, tokens, heads, headDim]: the query at (s, t) with p =
 * `positions[s, t]` >= 0 attends to cache rows max(0, p + 1 - window) ..= min(p, maxLen - 1) of
 * slot s with weights `softmax(scale * q.k)` (a `softcap` c > 0 making each score
 * c tanh(score / c)); rows with p < 0 are 0. `scale` defaults to 1 / sqrt(headDim), `window` to
 * all rows.
 */
export function cachedAttentionRef(
  q: ArrayLike<number>,
  kCache: ArrayLike<number>,
  vCache: ArrayLike<number>,
  positions: ArrayLike<number>,
  shape: KvCacheShape,
  scale = 1 / Math.sqrt(shape.headDim),
  window = Infinity,
  softcap = 0,
): Float64Array {
  const { slots, tokens, maxLen, heads, kvHeads, headDim } = shape;
  const group = heads / kvHeads;
  const out = new Float64Array(slots * tokens * heads * headDim);
  const weights = new Float64Array(maxLen);
  for (let s = 0; s < slots; s++) {
    for (let t = 0; t < tokens; t++) {
      const last = Math.min(positions[s * tokens + t], maxLen - 1);
      const first = Math.max(0, positions[s * tokens + t] + 1 - window);
      for (let h = 0; h < heads; h++) {
        const qAt = ((s * tokens + t) * heads + h) * headDim;
        const kvAt = (key: number) =>
          ((s * maxLen + key) * kvHeads + Math.floor(h / group)) * headDim;
        let max = -Infinity;
        for (let key = first; key <= last; key++) {
          let score = 0;
          for (let d = 0; d < headDim; d++) score += q[qAt + d] * kCache[kvAt(key) + d];
          weights[key] = softcap > 0 ? softcap * Math.tanh(score * scale / softcap) : score * scale;
          max = Math.max(max, weights[key]);
        }
        let sum = 0;
        for (let key = first; key <= last; key++) {
          weights[key] = Math.exp(weights[key] - max);
          sum += weights[key];
        }
        for (let key = first; key <= last; key++) {
          for (let d = 0; d < headDim; d++) {
            out[qAt + d] += (weights[key] / sum) * vCache[kvAt(key) + d];
          }
        }
      }
    }
  }
  return out;
}
