/**
 * Plain-loop CPU reference (f64) of causal self-attention with segment ids, an optional sliding
 * window, an optional soft cap of the scores and grouped-query attention, materialising each query row's scores. Tests compare the
 * GPU kernels (forward, log-sum-exp) and finite differences of this (backward) against it.
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
 * Whether query t attends to key s: s <= t, both in the same segment (a non-negative id) and,
 * with a `window` > 0, t - s < window (HF's sliding window).
 */
export function attendsRef(
  t: number,
  s: number,
  segT: number,
  segS: number,
  window: number,
): boolean {
  return s <= t && segT >= 0 && segS === segT && (window <= 0 || t - s < window);
}

/** The output and the log-sum-exp of each query row of {@link attentionForwardRef}. */
export interface AttentionForward {
  /** [batch, seq, heads, headDim]. */
  out: Float64Array;
  /** [batch, seq, heads]: log sum_s exp(score); 0 for padding rows. */
  lse: Float64Array;
}

/**
 * Attention output [batch, seq, heads, headDim] and log-sum-exp [batch, seq, heads]: query t
 * attends to key s as {@link attendsRef} says, with weights `softmax(scale * q.k)`; rows of
 * padding (a negative segment id) are 0 with lse 0. `scale` defaults to 1 / sqrt(headDim);
 * `window` 0 means no window; a `softcap` c > 0 makes each score c tanh(score / c).
 */
export function attentionForwardRef(
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  segmentIds: ArrayLike<number>,
  shape: AttentionShape,
  scale = 1 / Math.sqrt(shape.headDim),
  window = 0,
  softcap = 0,
): AttentionForward {
  const { batch, seq, heads, kvHeads, headDim } = shape;
  const group = heads / kvHeads;
  const out = new Float64Array(batch * seq * heads * headDim);
  const lse = new Float64Array(batch * seq * heads);
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
          if (attendsRef(t, s, segment, segmentIds[b * seq + s], window)) {
            score = 0;
            for (let d = 0; d < headDim; d++) score += q[qAt(b, t, h) + d] * k[kvAt(b, s, g) + d];
            score *= scale;
            if (softcap > 0) score = softcap * Math.tanh(score / softcap);
          }
          weights[s] = score;
          max = Math.max(max, score);
        }
        let sum = 0;
        for (let s = 0; s <= t; s++) {
          weights[s] = Math.exp(weights[s] - max);
          sum += weights[s];
        }
        lse[(b * seq + t) * heads + h] = max + Math.log(sum);
        for (let s = 0; s <= t; s++) {
          for (let d = 0; d < headDim; d++) {
            out[qAt(b, t, h) + d] += (weights[s] / sum) * v[kvAt(b, s, g) + d];
          }
        }
      }
    }
  }
  return { out, lse };
}

/** The output of {@link attentionForwardRef} alone. */
export function causalAttentionRef(
  ...args: Parameters<typeof attentionForwardRef>
): Float64Array {
  return attentionForwardRef(...args).out;
}
