/**
 * Causal self-attention as standard ONNX ops: positions and the additive mask from `input_ids`
 * and an optional `attention_mask` (left or right padding: positions restart at 0 on each
 * sequence's first real token, and padded keys are masked), rotate-half RoPE with HF's f32
 * inverse frequencies, and grouped-query attention without repeating K and V (queries are
 * grouped per KV head, 5-D MatMuls broadcast over the group). Matches rft's attention on the
 * real tokens; outputs at padded query positions are finite but meaningless.
 */

import { ropeInvFreq } from "../ops/rope.ts";
import type { OnnxGraphBuilder } from "./onnx_graph_builder.ts";
import { reshape } from "./onnx_layers.ts";

/** The most negative f32: the additive bias of a masked score (finite, so no NaN rows). */
const MASKED = -3.4028234663852886e38;

/** What every layer's attention uses, built once from the graph inputs. */
export interface AttentionContext {
  /** int64 positions, [batch, seq] with a mask, [1, seq] without. */
  positions: string;
  /** Additive float mask bias: [batch, 1, 1, seq, seq] with a mask, [seq, seq] without. */
  bias: string;
}

/** Head counts and size of one attention layer. */
export interface HeadLayout {
  heads: number;
  kvHeads: number;
  headDim: number;
}

/** Positions and the causal (and padding) mask bias for `ids` [batch, seq] int64. */
export function attentionContext(
  b: OnnxGraphBuilder,
  ids: string,
  attentionMask?: string,
): AttentionContext {
  const unsqueeze = (x: string, axes: number[]) => b.op("Unsqueeze", [x, b.int64s(axes)]);
  const seqLen = b.op("Gather", [b.op("Shape", [ids]), b.int64s([1], [])], { axis: { int: 0 } });
  const steps = b.op("Range", [b.int64s([0], []), seqLen, b.int64s([1], [])]);
  // causal[i, j] = key j <= query i.
  const causal = b.op("LessOrEqual", [unsqueeze(steps, [0]), unsqueeze(steps, [1])]);
  const biasWhere = (allowed: string) =>
    b.op("Where", [allowed, b.floats([0], []), b.floats([MASKED], [])]);
  if (attentionMask === undefined) {
    return { positions: unsqueeze(steps, [0]), bias: biasWhere(causal) };
  }
  const keyAllowed = unsqueeze(b.op("Cast", [attentionMask], { to: { int: 9 } }), [1, 2, 3]);
  // HF's position_ids for padded batches: the count of real tokens before, 0 on padding.
  const counted = b.op("CumSum", [attentionMask, b.int64s([1], [])]);
  const positions = b.op("Mul", [b.op("Sub", [counted, b.int64s([1], [])]), attentionMask]);
  return { positions, bias: biasWhere(b.op("And", [causal, keyAllowed])) };
}

/** RoPE's cos and sin, each [batch or 1, seq, 1, headDim], for int64 `positions`. */
export function ropeTables(
  b: OnnxGraphBuilder,
  positions: string,
  theta: number,
  headDim: number,
): { cos: string; sin: string } {
  const angle = b.op("Mul", [
    b.op("Unsqueeze", [b.op("Cast", [positions], { to: { int: 1 } }), b.int64s([2])]),
    b.floats([...ropeInvFreq(theta, headDim)]),
  ]);
  const full = b.op("Concat", [angle, angle], { axis: { int: 2 } });
  const perHead = (x: string) => b.op("Unsqueeze", [x, b.int64s([2])]);
  return { cos: perHead(b.op("Cos", [full])), sin: perHead(b.op("Sin", [full])) };
}

/** HF rotate-half RoPE of x [batch, seq, heads, headDim]: x cos + rotate_half(x) sin. */
export function applyRope(
  b: OnnxGraphBuilder,
  x: string,
  tables: { cos: string; sin: string },
  headDim: number,
): string {
  const half = headDim / 2;
  const [lo, hi] = b.ops("Split", [x, b.int64s([half, half])], 2, { axis: { int: 3 } });
  const rotated = b.op("Concat", [b.op("Neg", [hi]), lo], { axis: { int: 3 } });
  return b.op("Add", [b.op("Mul", [x, tables.cos]), b.op("Mul", [rotated, tables.sin])]);
}

/**
 * Softmax(q k^T / sqrt(headDim) + bias) v for q [batch, seq, heads, headDim] and k, v
 * [batch, seq, kvHeads, headDim]; query head h reads KV head floor(h / (heads / kvHeads)).
 * Returns [batch, seq, heads * headDim].
 */
export function groupedAttention(
  b: OnnxGraphBuilder,
  q: string,
  k: string,
  v: string,
  layout: HeadLayout,
  bias: string,
): string {
  const { heads, kvHeads, headDim } = layout;
  const group = heads / kvHeads;
  const transpose = (x: string, perm: number[]) => b.op("Transpose", [x], { perm: { ints: perm } });
  const oneGroup = (x: string) => b.op("Unsqueeze", [x, b.int64s([2])]);
  // [batch, kvHeads, group, seq, headDim], [batch, kvHeads, 1, headDim, seq], [.., 1, seq, headDim]
  const grouped = transpose(reshape(b, q, [0, 0, kvHeads, group, headDim]), [0, 2, 3, 1, 4]);
  const keys = oneGroup(transpose(k, [0, 2, 3, 1]));
  const values = oneGroup(transpose(v, [0, 2, 1, 3]));
  const scores = b.op("Mul", [
    b.op("MatMul", [grouped, keys]),
    b.floats([1 / Math.sqrt(headDim)], []),
  ]);
  const weights = b.op("Softmax", [b.op("Add", [scores, bias])]);
  const out = transpose(b.op("MatMul", [weights, values]), [0, 3, 1, 2, 4]);
  return reshape(b, out, [0, 0, heads * headDim]);
}
