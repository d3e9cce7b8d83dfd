/**
 * Plain-loop CPU references (f64) of the embedding lookup and its table gradient (scatter-add).
 * Ids outside [first, first + vocab) give zero rows and no gradient, as in the GPU op (`first`:
 * the table is a row shard starting at that row). Tests compare the GPU kernels against these.
 */

/** Rows of `table` [vocab, dim] picked by `ids` (minus `first`): [ids.length, dim], flattened. */
export function embeddingRef(
  table: ArrayLike<number>,
  dim: number,
  ids: ArrayLike<number>,
  first = 0,
): Float64Array {
  const vocab = table.length / dim;
  const out = new Float64Array(ids.length * dim);
  for (let t = 0; t < ids.length; t++) {
    const id = ids[t] - first;
    if (id < 0 || id >= vocab) continue;
    for (let d = 0; d < dim; d++) out[t * dim + d] = table[id * dim + d];
  }
  return out;
}

/** Gradient of the table given the output gradient `g` [ids.length, dim]: [vocab, dim]. */
export function embeddingGradRef(
  g: ArrayLike<number>,
  dim: number,
  ids: ArrayLike<number>,
  vocab: number,
  first = 0,
): Float64Array {
  const out = new Float64Array(vocab * dim);
  for (let t = 0; t < ids.length; t++) {
    const id = ids[t] - first;
    if (id < 0 || id >= vocab) continue;
    for (let d = 0; d < dim; d++) out[id * dim + d] += g[t * dim + d];
  }
  return out;
}
