/** Attention test problems shared by the register and flash kernel tests. */

import type { AttentionDims } from "../../src/ops/attention_register.ts";
import { mulberry32 } from "../../src/util/random.ts";
import { randomInput, type TestInput } from "../_harness.ts";

/** Segment ids of one row: a run of `length` positions per entry, id = the entry's value. */
export function runs(...pairs: [id: number, length: number][]): number[] {
  return pairs.flatMap(([id, length]) => new Array(length).fill(id));
}

/** Segment ids of `seq` positions in random order from {0, 1, 2} (non-contiguous segments). */
export function scattered(seq: number, seed: number): number[] {
  const next = mulberry32(seed);
  return Array.from({ length: seq }, () => Math.floor(next() * 3));
}

/** One attention problem: sizes, one segment-id row per batch row, value range of q and k. */
export interface AttentionCase {
  label: string;
  shape: AttentionDims;
  segments: number[][];
  /** q and k are uniform in [-qk, qk) (default 1). */
  qk?: number;
  /** Sliding window (default none). */
  window?: number;
}

/** Inputs (q, k, v, segment ids) of `c` from `seed`. */
export function caseInputs(c: AttentionCase, seed: number): TestInput[] {
  const { batch, seq, heads, kvHeads, headDim } = c.shape;
  const qk = c.qk ?? 1;
  const ids = c.segments.flat();
  if (c.segments.length !== batch || ids.length !== batch * seq) {
    throw new Error(`${c.label}: segment rows do not match [${batch},${seq}]`);
  }
  return [
    randomInput([batch, seq, heads, headDim], seed, -qk, qk),
    randomInput([batch, seq, kvHeads, headDim], seed + 1, -qk, qk),
    randomInput([batch, seq, kvHeads, headDim], seed + 2),
    { shape: [batch, seq], data: Int32Array.from(ids), dtype: "i32" },
  ];
}

/** A case from its sizes [batch, seq, heads, kvHeads, headDim] (one line per case in tables). */
export function attentionCase(
  label: string,
  [batch, seq, heads, kvHeads, headDim]: number[],
  segments: number[][],
  extra: Pick<AttentionCase, "qk" | "window"> = {},
): AttentionCase {
  return { label, shape: { batch, seq, heads, kvHeads, headDim }, segments, ...extra };
}
