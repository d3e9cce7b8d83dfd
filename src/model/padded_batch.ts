/**
 * Lays token sequences out as a [rows, seq] batch, one sequence per row (padded) or several
 * (packed, as the Marin `RlExample`): ids, positions (0.. per sequence), segment ids (0, 1, ..
 * per sequence of a row, -1 for padding; attention stays inside a segment) and next-token
 * targets (`vocab`, out of range, where there is no next token, so its log-prob is 0 and it gets
 * no gradient); the bucketed row length (so compiled graphs get reused); and per-token values
 * moved to next-token positions.
 */

/** Batch lengths are padded up to a multiple of this. */
export const SEQ_BUCKET = 16;

/** `length` rounded up to the bucket. */
export function paddedLength(length: number): number {
  return Math.ceil(length / SEQ_BUCKET) * SEQ_BUCKET;
}

/** `column` rounded down to the bucket (where a window of whole buckets starts). */
export function bucketStart(column: number): number {
  return Math.floor(column / SEQ_BUCKET) * SEQ_BUCKET;
}

/** Columns `from` .. seq - 1 of each row of `values` ([rows, seq]), as [rows, seq - from]. */
export function columnsFrom<T extends Int32Array<ArrayBuffer> | Float32Array<ArrayBuffer>>(
  values: T,
  seq: number,
  from: number,
): T {
  if (from === 0) return values;
  const rows = values.length / seq;
  const out = new (values.constructor as new (n: number) => T)(rows * (seq - from));
  for (let r = 0; r < rows; r++) {
    out.set(values.subarray(r * seq + from, (r + 1) * seq), r * (seq - from));
  }
  return out;
}

/** Rows of a batch: each row lists the sequences laid end to end in it. */
export type RowLayout<T> = readonly (readonly T[])[];

/**
 * Token-aligned values (one per token of each sequence) laid out [rows * seq] at the positions
 * that predict each token: the entry at a sequence's token t is its value at t + 1 (position t
 * computes token t + 1); 0 at a sequence's last token and past the sequences of a row.
 */
export function packAtNextTokenPositions(
  rows: RowLayout<ArrayLike<number>>,
  seq: number,
): Float32Array<ArrayBuffer> {
  const out = new Float32Array(rows.length * seq);
  rows.forEach((row, r) => {
    let offset = r * seq;
    for (const values of row) {
      out.set(Array.prototype.slice.call(values, 1), offset);
      offset += values.length;
    }
  });
  return out;
}

/** {@link packAtNextTokenPositions} with one sequence per row. */
export function atNextTokenPositions(
  rows: readonly (ArrayLike<number>)[],
  seq: number,
): Float32Array<ArrayBuffer> {
  return packAtNextTokenPositions(rows.map((r) => [r]), seq);
}

/** The per-token input arrays of a batch, each [rows * seq] i32. */
export interface PaddedBatch {
  ids: Int32Array<ArrayBuffer>;
  positions: Int32Array<ArrayBuffer>;
  segments: Int32Array<ArrayBuffer>;
  targets: Int32Array<ArrayBuffer>;
}

/**
 * Lays each row's sequences end to end in `seq` tokens (`seq` >= each row's total), segment i
 * for the i-th sequence of a row; `vocab` marks "no target".
 */
export function packBatch(
  rows: RowLayout<readonly number[]>,
  seq: number,
  vocab: number,
): PaddedBatch {
  const n = rows.length * seq;
  const batch: PaddedBatch = {
    ids: new Int32Array(n),
    positions: new Int32Array(n),
    segments: new Int32Array(n).fill(-1),
    targets: new Int32Array(n).fill(vocab),
  };
  rows.forEach((row, r) => {
    const total = row.reduce((sum, s) => sum + s.length, 0);
    if (total > seq) {
      throw new Error(`Cannot lay out row ${r}: ${total} tokens exceed the batch length ${seq}`);
    }
    let offset = r * seq;
    row.forEach((s, segment) => {
      s.forEach((id, t) => {
        const i = offset + t;
        batch.ids[i] = id;
        batch.positions[i] = t;
        batch.segments[i] = segment;
        if (t + 1 < s.length) batch.targets[i] = s[t + 1];
      });
      offset += s.length;
    });
  });
  return batch;
}

/** Pads `sequences` to `seq` tokens each (`seq` >= the longest), one per row. */
export function padBatch(
  sequences: readonly (readonly number[])[],
  seq: number,
  vocab: number,
): PaddedBatch {
  return packBatch(sequences.map((s) => [s]), seq, vocab);
}
