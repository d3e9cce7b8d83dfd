/**
 * Plain-loop CPU reference (f64) of causal self-attention with segment ids, an optional sliding
 * window and grouped-query attention, materialising each query row's scores. Tests compare the GPU kernels (forward) and
 * finite differences of this (backward) against it.
 */

/**
 * Sizes of an attention problem: q [batch, seq, heads, headDim], k and v [batch, seq, kvHeads,
 * headDim].
 */
export interface AttentionShape {
  batch: number;
  seq: number;
  heads: number;
  /** Divides `heads`: query head h uses kv head floor(h / (heads / kvHeads)). */
  kvHeads: number;
  headDim: number;
}

/**
 * Attention output [batch, seq, heads, headDim]: query t attends to key s iff s <= t,
 * `segmentIds[b, s] == segmentIds[b, t] >= 0` and, with a `window` > 0, t - s < window (HF's
 * sliding window), with weights `softmax(scale * q.k)`; rows of padding (a negative segment id)
 * are 0. `scale` defaults to 1 / sqrt(headDim); `window` 0 means no window.
 */
export function causalAttentionRef(
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  segmentIds: ArrayLike<number>,
  shape: AttentionShape,
  scale = 1 / Math.sqrt(shape.headDim),
  window = 0,
): Float64Array {
  const { batch, seq, heads, kvHeads, headDim } = shape;
  const group = heads / kvHeads;
  const out = new Float64Array(batch * seq * heads * headDim);
  const weights = new Float64Array(seq);
  const qAt = (b: number, t: number, h: number) => ((b * seq + t) * heads + h) * headDim;
  const kvAt = (b: number, t: number, g: number) => ((b * seq + t) * kvHeads + g) * headDim;
  for (let b = 0; b < batch; b++) {
    for (let t = 0; t < seq; t++) {
      const segment = segmentIds[b * seq + t];
      if (segment < 0) continue;
      for (let h = 0; h < heads; h++) {
        const g = Math.floor(h / group);
        let max = -Infinity;
        for (let s = 0; s <= t; s++) {
          let score = -Infinity;
          if (segmentIds[b * seq + s] === segment && (window <= 0 || t - s < window)) {
            score = 0;
            for (let d = 0; d < headDim; d++) score += q[qAt(b, t, h) + d] * k[kvAt(b, s, g) + d];
            score *= scale;
          }
          weights[s] = score;
          max = Math.max(max, score);
        }
        let sum = 0;
        for (let s = 0; s <= t; s++) {
          weights[s] = Math.exp(weights[s] - max);
          sum += weights[s];
        }
        for (let s = 0; s <= t; s++) {
          for (let d = 0; d < headDim; d++) {
            out[qAt(b, t, h) + d] += (weights[s] / sum) * v[kvAt(b, s, g) + d];
          }
        }
      }
    }
  }
  return out;
}
