/**
 * Plain-loop CPU references (f64) of the sampler's logits processors: bias and OpenAI's
 * frequency / presence penalties applied to logits, and the per-row token counts they read.
 */

/**
 * `z + bias - frequency * count - presence * (count > 0)` per element of [rows, cols] data;
 * `penalties` holds (frequency, presence) per row.
 */
export function processLogitsRef(
  z: ArrayLike<number>,
  bias: ArrayLike<number>,
  counts: ArrayLike<number>,
  penalties: ArrayLike<number>,
  cols: number,
): Float64Array {
  return Float64Array.from(z, (v, i) => {
    const row = Math.floor(i / cols);
    const c = counts[i];
    return v + bias[i] - penalties[2 * row] * c - penalties[2 * row + 1] * (c > 0 ? 1 : 0);
  });
}

/** `counts` [rows, cols] with one more of each row's token (a token >= cols adds nothing). */
export function countTokensRef(
  counts: ArrayLike<number>,
  tokens: ArrayLike<number>,
  cols: number,
): Float64Array {
  const out = Float64Array.from(counts);
  Array.from(tokens).forEach((token, row) => {
    if (token < cols) out[row * cols + token] += 1;
  });
  return out;
}
