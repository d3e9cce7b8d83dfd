/**
 * The policy's graphs: token ids, positions and segment ids in, logits out, for any decoder the
 * family table describes (`decoder.ts` builds the layers from the description). The types the
 * graph's users share (weights by HF name, the attention callback, build options) live here.
 * Only builds graphs: weights come from the caller, and nothing here runs a kernel.
 */

import type { Tensor } from "../graph/tensor.ts";
import { add } from "../ops/binary.ts";
import { causalAttention } from "../ops/attention.ts";
import { matmul } from "../ops/matmul.ts";
import { reshape } from "../ops/reshape.ts";
import { rope } from "../ops/rope.ts";
import { padLast, sliceLast } from "../ops/slice.ts";
import type { VocabPiece } from "../ops/token_logprobs.ts";
import { scale, tanh } from "../ops/unary.ts";
import { decoderHidden } from "./decoder.ts";
import type { BuildOptions } from "./fused_block.ts";
import type { ModelConfig } from "./model_config.ts";

export { type BuildOptions, inferenceBuild } from "./fused_block.ts";

/** One row shard of a weight: the rows from `first` on. */
export interface RowShard {
  weight: Tensor;
  first: number;
}

/** Parameters by HF name, as graph tensors. */
export interface WeightLookup {
  (name: string): Tensor;
  /**
   * The row shards of a weight stored in pieces (`row_shards.ts`), in row order; undefined for
   * a weight stored whole, which the call form returns.
   */
  shards?(name: string): readonly RowShard[] | undefined;
  /**
   * The LoRA adapter of linear module `module` (HF name without `.weight`), or undefined when
   * it has none: its output gains `scale * (x A^T) B^T`.
   */
  lora?(module: string): LoraWeights | undefined;
}

/** A module's adapter in a graph: A [r, in], B [out, r] and the factor alpha / r. */
export interface LoraWeights {
  a: Tensor;
  b: Tensor;
  scale: number;
}

/**
 * Per-token inputs, each [batch, seq] i32: token ids, positions (restarting at 0 in every
 * sequence, continuing after a KV cache), and segment ids (tokens attend only within their own
 * segment; < 0 marks padding).
 */
export interface TokenInputs {
  ids: Tensor;
  positions: Tensor;
  segments: Tensor;
}

/** Ids and positions, each [batch, seq] i32 (or u32 ids). */
export type HiddenInputs = Pick<TokenInputs, "ids" | "positions">;

/** RoPE of a layer's queries and keys: the tokens' positions and the kind's inverse frequencies. */
export interface Rotary {
  positions: Tensor;
  invFreq: Float32Array<ArrayBuffer>;
  /**
   * Factor of the rotated dims of partial rotary (HF's attention scaling of cos and sin: yarn,
   * longrope); rotations of whole heads leave it to the score scale.
   */
  factor?: number;
}

/** What one layer's attention applies besides q, k and v (from the model's description). */
export interface LayerAttention {
  /** Factor of q.k before the softmax. */
  scale: number;
  /** RoPE of q and k, not yet applied; absent for learned positions (GPT-2). */
  rotary?: Rotary;
  /** Sliding window: keys this many positions or more before the query are not attended. */
  window?: number;
  /** Soft cap of the scores (softcap * tanh(score / softcap)). */
  softcap?: number;
  /**
   * q, k and v side by side [batch, seq, (heads + 2 kvHeads) * headDim] (each token's q, then k,
   * then v) where one product gave them so (a fused qkv module, `normedQkvGemv`) and no q/k norm
   * came after: q, k and v are its column windows, and an attention may read it instead of them.
   */
  qkv?: Tensor;
}

/**
 * The attention of layer `layer`: q [batch, seq, heads, headDim], k and v [batch, seq, kvHeads,
 * headDim] to [batch, seq, heads, headDim], as `spec` says. With `spec.rotary` q and k are not
 * yet rotated: the function applies RoPE ({@link rotate}) or fuses it into what it does anyway
 * (generation rotates the keys as it writes them into the KV cache). Training uses causal
 * attention over segments ({@link causalAttentionFn}); generation writes k, v into a KV cache and
 * attends over it.
 */
export type AttentionFn = (
  layer: number,
  q: Tensor,
  k: Tensor,
  v: Tensor,
  spec: LayerAttention,
) => Tensor;

/**
 * `x` rotated by RoPE as `rotary` says (the first 2 * invFreq.length dims of each head: all, or
 * partial rotary's part, scaled by its factor, the rest as it was), or `x` itself without one.
 */
export function rotate(x: Tensor, rotary: Rotary | undefined): Tensor {
  if (!rotary) return x;
  const { positions, invFreq } = rotary;
  if (rotatesWholeHeads(rotary, x.lastDim)) return rope(x, positions, invFreq);
  const [D, width] = [x.lastDim, 2 * invFreq.length];
  const part = rope(sliceLast(x, 0, width), positions, invFreq);
  const rotated = padLast(rotary.factor === undefined ? part : scale(part, rotary.factor), 0, D);
  return add(rotated, padLast(sliceLast(x, width, D - width), width, D));
}

/** Whether `rotary` rotates every dim of heads of `headDim` (not partial rotary). */
export function rotatesWholeHeads(rotary: Rotary, headDim: number): boolean {
  return 2 * rotary.invFreq.length === headDim;
}

/** Causal attention within segments (`segments` [batch, seq], < 0 padding), RoPE applied. */
export function causalAttentionFn(segments: Tensor): AttentionFn {
  return (_layer, q, k, v, { rotary, ...options }) =>
    causalAttention(rotate(q, rotary), rotate(k, rotary), v, segments, options);
}

/**
 * Logits [batch, seq - from, vocab] of the model with config `cfg` on `inputs`, at positions
 * `from` .. seq - 1 only (a loss that reads no logits before `from` skips the LM head there).
 */
export function buildLogits(...args: Parameters<typeof scoredHidden>): Tensor {
  const [cfg, w] = args;
  return lmHead(cfg, w, scoredHidden(...args));
}

/**
 * Final hidden states [batch, seq - from, hidden] of the model on `inputs` (causal attention
 * within segments), at positions `from` .. seq - 1: what the LM head reads there.
 */
export function scoredHidden(
  cfg: ModelConfig,
  w: WeightLookup,
  inputs: TokenInputs,
  from = 0,
  options: BuildOptions = {},
): Tensor {
  const hidden = buildHidden(cfg, w, inputs, causalAttentionFn(inputs.segments), options);
  if (from === 0) return hidden;
  const [batch, seq, width] = hidden.shape;
  const kept = reshape(hidden, [batch, seq * width]);
  return reshape(sliceLast(kept, from * width, (seq - from) * width), [batch, seq - from, width]);
}

/** Final hidden states [batch, seq, hidden] (after the last norm), attention supplied. */
export function buildHidden(
  cfg: ModelConfig,
  w: WeightLookup,
  inputs: HiddenInputs,
  attention: AttentionFn,
  options: BuildOptions = {},
): Tensor {
  return decoderHidden(cfg, w, inputs, attention, options);
}

/**
 * Logits [..., vocab] from hidden states [..., hidden]: the tied or untied output head, scaled
 * (Granite's `logits_scaling`) and soft-capped (`final_logit_softcapping`) as the description
 * says.
 */
export function lmHead(cfg: ModelConfig, w: WeightLookup, h: Tensor): Tensor {
  const pieces = lmHeadPieces(cfg, w, h);
  if (pieces.length === 1) return pieces[0].logits;
  // Each shard's logits in their columns of the vocabulary, summed: a concatenation.
  return pieces
    .map(({ logits, first }) => padLast(logits, first, cfg.vocabSize))
    .reduce((a, b) => add(a, b));
}

/**
 * The LM head's logits (scaled and soft-capped as {@link lmHead}'s) from hidden states [..., hidden] in
 * pieces of the vocabulary: one per row shard of the head's weight (one piece for a head stored
 * whole), each [..., shard rows] with the token id of its first column.
 */
export function lmHeadPieces(cfg: ModelConfig, w: WeightLookup, h: Tensor): VocabPiece[] {
  const head = cfg.tieWordEmbeddings ? cfg.names.embedding : cfg.names.lmHead;
  const shards = w.shards?.(head) ?? [{ weight: w(head), first: 0 }];
  const cap = cfg.finalLogitSoftcap;
  return shards.map(({ weight, first }) => {
    const product = matmul(h, weight, { transB: true });
    const logits = cfg.logitScale === undefined ? product : scale(product, cfg.logitScale);
    return {
      logits: cap === undefined ? logits : scale(tanh(scale(logits, 1 / cap)), cap),
      first,
    };
  });
}
