/** Plain-loop CPU references of `sliceLast` and `padLast`. */

/** Columns [start, start + width) of each row of `x` (rows of `wide` columns). */
export function sliceLastRef(
  x: ArrayLike<number>,
  wide: number,
  start: number,
  width: number,
): Float64Array {
  const rows = x.length / wide;
  const out = new Float64Array(rows * width);
  for (let r = 0; r < rows; r++) {
    for (let j = 0; j < width; j++) out[r * width + j] = x[r * wide + start + j];
  }
  return out;
}

/** Each row of `x` (width columns) placed at `start` in a row of `wide` zeros. */
export function padLastRef(x: ArrayLike<number>, width: number, start: number, wide: number) {
  const rows = x.length / width;
  const out = new Float64Array(rows * wide);
  for (let r = 0; r < rows; r++) {
    for (let j = 0; j < width; j++) out[r * wide + start + j] = x[r * width + j];
  }
  return out;
}
