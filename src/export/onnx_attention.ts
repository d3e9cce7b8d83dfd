/**
 * Causal self-attention as standard ONNX ops: positions and the additive mask from `input_ids`,
 * an optional `attention_mask` (left or right padding: positions restart at 0 on each sequence's
 * first real token, and padded keys are masked) and optional `position_ids`, rotate-half RoPE
 * with HF's f32 inverse frequencies, and grouped-query attention without repeating K and V
 * (queries are grouped per KV head, 5-D MatMuls broadcast over the group). With a KV cache the
 * mask covers past and new keys (the query of new token i sits at past + i). Matches rft's
 * attention on the real tokens; outputs at padded query positions are finite but meaningless.
 */

import type { OnnxGraphBuilder } from "./onnx_graph_builder.ts";
import { reshape } from "./onnx_layers.ts";

/** The most negative f32: the additive bias of a masked score (finite, so no NaN rows). */
const MASKED = -3.4028234663852886e38;

/**
 * The keys and values layer `layer` attends to, [batch, kvHeads, keys, headDim], from its new
 * `keys` and `values` (in the layout the user of the source documents).
 */
export type KeyValueSource = (
  layer: number,
  keys: string,
  values: string,
) => { keys: string; values: string };

/** What every layer's attention uses, built once from the graph inputs. */
export interface AttentionContext {
  /** int64 positions, [batch, seq] with a mask or explicit positions, [1, seq] otherwise. */
  positions: string;
  /**
   * The additive float mask bias of attention with a sliding `window` (keys `window` or more
   * steps before the query masked; none: causal only): [batch, 1, 1, seq, keys] with a mask,
   * [seq, seq] without. Built once per window.
   */
  bias(window?: number): string;
  /**
   * Keys and values [batch, kvHeads, keys, headDim] layer `layer` attends to, from its new k, v
   * [batch, seq, kvHeads, headDim] (with a cache, the past ones first).
   */
  keysValues: KeyValueSource;
}

/** The graph inputs attention is built from. */
export interface AttentionInputs {
  /** int64 [batch, seq]: the new tokens. */
  ids: string;
  /** int64 [batch, keys] (1 = token, 0 = padding), keys = past + seq; none: unpadded. */
  mask?: string;
  /** int64 [batch, seq]; none: counted from the mask (or 0..seq-1 without one). */
  positions?: string;
  /**
   * Puts the past keys and values before the new ones, [batch, kvHeads, seq, headDim] (requires
   * `mask`, whose length says how many keys there are).
   */
  cache?: KeyValueSource;
}

/** Head counts and size of one attention layer, and the factor of its scores. */
export interface HeadLayout {
  heads: number;
  kvHeads: number;
  headDim: number;
  scale: number;
  /** Soft cap of the scores (softcap * tanh(score / softcap)), where the model has one. */
  softcap?: number;
}

/** Positions, the causal (padding, window) mask biases and the key source of `inputs`. */
export function attentionContext(b: OnnxGraphBuilder, inputs: AttentionInputs): AttentionContext {
  const { ids, mask } = inputs;
  const unsqueeze = (x: string, axes: number[]) => b.op("Unsqueeze", [x, b.int64s(axes)]);
  const length = (x: string) =>
    b.op("Gather", [b.op("Shape", [x]), b.int64s([1], [])], { axis: { int: 0 } });
  const range = (from: string, to: string) => b.op("Range", [from, to, b.int64s([1], [])]);
  const seqLen = length(ids);
  const keyLen = mask === undefined ? seqLen : length(mask);
  const keySteps = range(b.int64s([0], []), keyLen);
  // The new tokens are the last seqLen of keyLen: query i sits at keyLen - seqLen + i.
  const querySteps = mask === undefined ? keySteps : range(b.op("Sub", [keyLen, seqLen]), keyLen);
  // causal[i, j] = key j <= query i; windowed: query i - key j < window too.
  const causal = b.op("LessOrEqual", [unsqueeze(keySteps, [0]), unsqueeze(querySteps, [1])]);
  const distance = b.op("Sub", [unsqueeze(querySteps, [1]), unsqueeze(keySteps, [0])]);
  const allowedIn = (window?: number) =>
    window === undefined
      ? causal
      : b.op("And", [causal, b.op("Less", [distance, b.int64s([window], [])])]);
  const biasWhere = (allowed: string) =>
    b.op("Where", [allowed, b.floats([0], []), b.floats([MASKED], [])]);
  const biases = new Map<number | undefined, string>();
  const biasOf = (allowed: (window?: number) => string) => (window?: number) => {
    if (!biases.has(window)) biases.set(window, biasWhere(allowed(window)));
    return biases.get(window)!;
  };
  const toHeads = (x: string) => b.op("Transpose", [x], { perm: { ints: [0, 2, 1, 3] } });
  // New k, v arrive [batch, seq, kvHeads, headDim]; attention and the cache use heads first.
  const withHeads: KeyValueSource = (layer, k, v) => {
    const [keys, values] = [toHeads(k), toHeads(v)];
    return inputs.cache ? inputs.cache(layer, keys, values) : { keys, values };
  };
  if (mask === undefined) {
    if (inputs.cache) {
      throw new Error("Cannot build cached attention: expected an attention_mask, received none");
    }
    const positions = inputs.positions ?? unsqueeze(keySteps, [0]);
    return { positions, bias: biasOf(allowedIn), keysValues: withHeads };
  }
  const keyAllowed = unsqueeze(b.op("Cast", [mask], { to: { int: 9 } }), [1, 2, 3]);
  // HF's position_ids for padded batches: the count of real tokens before, 0 on padding.
  const counted = () => {
    const cumsum = b.op("CumSum", [mask, b.int64s([1], [])]);
    return b.op("Mul", [b.op("Sub", [cumsum, b.int64s([1], [])]), mask]);
  };
  return {
    positions: inputs.positions ?? counted(),
    bias: biasOf((window) => b.op("And", [allowedIn(window), keyAllowed])),
    keysValues: withHeads,
  };
}

/**
 * RoPE's cos and sin, each [batch or 1, seq, 1, rotaryDim] and multiplied by `factor` (HF's
 * attention scaling: yarn, longrope), for int64 `positions` and the inverse frequencies
 * `invFreq` [rotaryDim / 2].
 */
export function ropeTables(
  b: OnnxGraphBuilder,
  positions: string,
  invFreq: Float32Array,
  factor = 1,
): { cos: string; sin: string } {
  const angle = b.op("Mul", [
    b.op("Unsqueeze", [b.op("Cast", [positions], { to: { int: 1 } }), b.int64s([2])]),
    b.floats([...invFreq]),
  ]);
  const full = b.op("Concat", [angle, angle], { axis: { int: 2 } });
  const perHead = (x: string) => {
    const scaled = factor === 1 ? x : b.op("Mul", [x, b.floats([factor], [])]);
    return b.op("Unsqueeze", [scaled, b.int64s([2])]);
  };
  return { cos: perHead(b.op("Cos", [full])), sin: perHead(b.op("Sin", [full])) };
}

/**
 * HF rotate-half RoPE of x [batch, seq, heads, headDim]: x cos + rotate_half(x) sin on the first
 * `rotaryDim` dims of each head (the tables' width), the rest concatenated unrotated.
 */
export function applyRope(
  b: OnnxGraphBuilder,
  x: string,
  tables: { cos: string; sin: string },
  headDim: number,
  rotaryDim = headDim,
): string {
  if (rotaryDim < headDim) {
    const sizes = b.int64s([rotaryDim, headDim - rotaryDim]);
    const [rotated, kept] = b.ops("Split", [x, sizes], 2, { axis: { int: 3 } });
    const parts = [applyRope(b, rotated, tables, rotaryDim), kept];
    return b.op("Concat", parts, { axis: { int: 3 } });
  }
  const half = headDim / 2;
  const [lo, hi] = b.ops("Split", [x, b.int64s([half, half])], 2, { axis: { int: 3 } });
  const rotated = b.op("Concat", [b.op("Neg", [hi]), lo], { axis: { int: 3 } });
  return b.op("Add", [b.op("Mul", [x, tables.cos]), b.op("Mul", [rotated, tables.sin])]);
}

/**
 * Softmax(scale q k^T + bias) v (the scores soft-capped first with `layout.softcap`) for q [batch, seq, heads, headDim] and keys, values
 * [batch, kvHeads, keys, headDim]; query head h reads KV head floor(h / (heads / kvHeads)).
 * Returns [batch, seq, heads * headDim].
 */
export function groupedAttention(
  b: OnnxGraphBuilder,
  q: string,
  kv: { keys: string; values: string },
  layout: HeadLayout,
  bias: string,
): string {
  const { heads, kvHeads, headDim, scale } = layout;
  const group = heads / kvHeads;
  const transpose = (x: string, perm: number[]) => b.op("Transpose", [x], { perm: { ints: perm } });
  const oneGroup = (x: string) => b.op("Unsqueeze", [x, b.int64s([2])]);
  // [batch, kvHeads, group, seq, headDim], [batch, kvHeads, 1, headDim, keys], [.., 1, keys, headDim]
  const grouped = transpose(reshape(b, q, [0, 0, kvHeads, group, headDim]), [0, 2, 3, 1, 4]);
  const keys = oneGroup(transpose(kv.keys, [0, 1, 3, 2]));
  const values = oneGroup(kv.values);
  const scaled = b.op("Mul", [
    b.op("MatMul", [grouped, keys]),
    b.floats([scale], []),
  ]);
  const cap = layout.softcap;
  const scores = cap === undefined ? scaled : b.op("Mul", [
    b.op("Tanh", [b.op("Div", [scaled, b.floats([cap], [])])]),
    b.floats([cap], []),
  ]);
  const weights = b.op("Softmax", [b.op("Add", [scores, bias])]);
  const out = transpose(b.op("MatMul", [weights, values]), [0, 3, 1, 2, 4]);
  return reshape(b, out, [0, 0, heads * headDim]);
}
