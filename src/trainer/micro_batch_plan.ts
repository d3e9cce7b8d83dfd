/**
 * How a training batch is cut into micro-batches under a token budget (rows x row length per
 * micro-batch), and how sequences are laid into rows: one per row, or packed several per row
 * (first-fit decreasing into rows as long as the longest sequence) when the loss is a sum over
 * tokens. A loss that cannot be split is never cut; DPO's (chosen, rejected) pairs stay
 * together. Pure: no GPU work.
 */

import type { MicroBatchSplit } from "../algorithm/policy_loss/policy_loss_fn.ts";
import { paddedLength } from "../model/padded_batch.ts";

/** One micro-batch: the experience indices laid in each row, and the row length. */
export interface MicroBatch {
  rows: number[][];
  seq: number;
}

/** Options of {@link planMicroBatches}. */
export interface MicroBatchOptions {
  /** Most tokens (rows x row length) per micro-batch; absent: no limit. */
  maxTokens?: number;
  /** How the loss may be cut; absent: not at all. */
  split?: MicroBatchSplit;
  /** Pack several sequences per row (only honoured with `split` "tokens"). */
  pack?: boolean;
}

/**
 * Micro-batches of the sequences of `lengths` (token counts, in batch order). Every index
 * appears in exactly one row. Without a budget the whole batch is one micro-batch; a unit
 * (sequence, pair or packed row) longer than the budget gets a micro-batch of its own.
 */
export function planMicroBatches(
  lengths: readonly number[],
  { maxTokens, split, pack = false }: MicroBatchOptions,
): MicroBatch[] {
  if (lengths.length === 0) throw new Error("Cannot plan micro-batches of an empty batch");
  if (maxTokens !== undefined && !(Number.isInteger(maxTokens) && maxTokens > 0)) {
    throw new Error(
      `Cannot plan micro-batches: expected a positive integer token budget, received ${maxTokens}`,
    );
  }
  const longest = Math.max(...lengths);
  if (split === "tokens" && pack) {
    return packedMicroBatches(lengths, paddedLength(longest), maxTokens);
  }
  const all = lengths.map((_, i) => i);
  if (split === undefined || maxTokens === undefined) {
    return [{ rows: all.map((i) => [i]), seq: paddedLength(longest) }];
  }
  if (split === "pairs" && lengths.length % 2 !== 0) {
    throw new Error(
      `Cannot plan micro-batches of pairs: expected an even number of sequences, received ${lengths.length}`,
    );
  }
  const unitSize = split === "pairs" ? 2 : 1;
  const units: number[][] = [];
  for (let i = 0; i < lengths.length; i += unitSize) units.push(all.slice(i, i + unitSize));
  const unitLength = (u: number[]) => Math.max(...u.map((i) => lengths[i]));
  // Longest first, so each micro-batch's row length is set by its first unit.
  units.sort((a, b) => unitLength(b) - unitLength(a) || a[0] - b[0]);
  const batches: MicroBatch[] = [];
  let current: MicroBatch | undefined;
  for (const unit of units) {
    const rows = (current?.rows.length ?? 0) + unit.length;
    if (!current || rows * current.seq > maxTokens) {
      current = { rows: [], seq: paddedLength(unitLength(unit)) };
      batches.push(current);
    }
    current.rows.push(...unit.map((i) => [i]));
  }
  return batches;
}

/**
 * Packs sequences first-fit decreasing into rows of `seq` tokens, then groups the rows into
 * micro-batches of at most `maxTokens / seq` rows (at least one).
 */
function packedMicroBatches(
  lengths: readonly number[],
  seq: number,
  maxTokens: number | undefined,
): MicroBatch[] {
  const order = lengths.map((_, i) => i).sort((a, b) => lengths[b] - lengths[a] || a - b);
  const rows: { indices: number[]; free: number }[] = [];
  for (const i of order) {
    const row = rows.find((r) => r.free >= lengths[i]);
    if (row) {
      row.indices.push(i);
      row.free -= lengths[i];
    } else {
      rows.push({ indices: [i], free: seq - lengths[i] });
    }
  }
  const perBatch = maxTokens === undefined ? rows.length : Math.max(1, Math.floor(maxTokens / seq));
  const batches: MicroBatch[] = [];
  for (let r = 0; r < rows.length; r += perBatch) {
    batches.push({ rows: rows.slice(r, r + perBatch).map((row) => row.indices), seq });
  }
  return batches;
}
