/**
 * Lays token sequences out as a padded [batch, seq] batch: ids, positions (0.. per sequence),
 * segment ids (0 for tokens, -1 for padding) and next-token targets (`vocab`, out of range, where
 * there is no next token, so its log-prob is 0 and it gets no gradient); the bucketed batch length
 * (so compiled graphs get reused); and per-token values moved to next-token positions.
 */

/** Batch lengths are padded up to a multiple of this. */
export const SEQ_BUCKET = 16;

/** `length` rounded up to the bucket. */
export function paddedLength(length: number): number {
  return Math.ceil(length / SEQ_BUCKET) * SEQ_BUCKET;
}

/**
 * Token-aligned rows (one value per token) laid out [rows * seq] at the positions that predict
 * each token: entry t of a row is row[t + 1] (position t computes token t + 1); 0 past the row.
 */
export function atNextTokenPositions(
  rows: readonly (ArrayLike<number>)[],
  seq: number,
): Float32Array<ArrayBuffer> {
  const out = new Float32Array(rows.length * seq);
  rows.forEach((row, b) => out.set(Array.prototype.slice.call(row, 1), b * seq));
  return out;
}

/** The per-token input arrays of a padded batch, each [batch * seq] i32. */
export interface PaddedBatch {
  ids: Int32Array<ArrayBuffer>;
  positions: Int32Array<ArrayBuffer>;
  segments: Int32Array<ArrayBuffer>;
  targets: Int32Array<ArrayBuffer>;
}

/** Pads `sequences` to `seq` tokens each (`seq` >= the longest); `vocab` marks "no target". */
export function padBatch(
  sequences: readonly (readonly number[])[],
  seq: number,
  vocab: number,
): PaddedBatch {
  const n = sequences.length * seq;
  const batch: PaddedBatch = {
    ids: new Int32Array(n),
    positions: new Int32Array(n),
    segments: new Int32Array(n).fill(-1),
    targets: new Int32Array(n).fill(vocab),
  };
  sequences.forEach((s, b) => {
    if (s.length > seq) {
      throw new Error(
        `Cannot pad sequence ${b}: ${s.length} tokens exceed the batch length ${seq}`,
      );
    }
    s.forEach((id, t) => {
      const i = b * seq + t;
      batch.ids[i] = id;
      batch.positions[i] = t;
      batch.segments[i] = 0;
      if (t + 1 < s.length) batch.targets[i] = s[t + 1];
    });
  });
  return batch;
}
