/**
 * Per-token log-probs and entropies from final hidden states without the whole logits: the LM
 * head, the temperature, the log-softmax statistics and (in training) the gradient run over
 * chunks of tokens, each chunk's logits in the head's pieces of the vocabulary
 * (`tokenStats`: one pass per piece, nothing joined), so at most one chunk's logits exist at a
 * time. In a graph that is differentiated each chunk is a checkpointed region: its logits are
 * recomputed in the backward pass rather than kept from the forward. The values equal the
 * unchunked computation's (each row's statistics do not depend on the other rows).
 */

import { checkpoint } from "../graph/checkpoint.ts";
import type { Tensor } from "../graph/tensor.ts";
import { add, mul } from "../ops/binary.ts";
import { sumLast } from "../ops/reduce.ts";
import { reshape } from "../ops/reshape.ts";
import { padLast, sliceLast } from "../ops/slice.ts";
import { logSoftmax, softmax } from "../ops/softmax.ts";
import { statsColumn, TOKEN_STATS_WIDTH, tokenEntropy, tokenStats } from "../ops/token_logprobs.ts";
import { scale } from "../ops/unary.ts";
import type { ModelConfig } from "./hf_config.ts";
import { lmHead, lmHeadPieces, type WeightLookup } from "./transformer.ts";

/** Bytes of f32 logits one chunk of tokens may hold (all pieces of its vocabulary). */
export const LOGITS_CHUNK_BYTES = 32 * 2 ** 20;

/** Options of {@link tokenScores}. */
export interface TokenScoreOptions {
  /** Logits are divided by this before the log-softmax (the rollout temperature); default 1. */
  temperature?: number;
  /** Recompute each chunk's logits in the backward pass (graphs that are differentiated). */
  recompute?: boolean;
  /** Tokens per chunk; default: as many as {@link LOGITS_CHUNK_BYTES} of logits hold. */
  chunkTokens?: number;
}

/** Log-probs of the targets and softmax entropies, one per token. */
export interface TokenScores {
  logp: Tensor;
  entropy: Tensor;
}

/** Tokens per chunk of logits over `vocab` columns within {@link LOGITS_CHUNK_BYTES}. */
export function chunkTokens(vocab: number): number {
  return Math.max(1, Math.floor(LOGITS_CHUNK_BYTES / (4 * vocab)));
}

/**
 * Log-probs of `targets` ([...], i32) and entropies, each [...], from `hidden` [..., hidden] (the
 * states the LM head reads at those positions), in chunks of tokens (see the file comment).
 */
export function tokenScores(
  cfg: ModelConfig,
  w: WeightLookup,
  hidden: Tensor,
  targets: Tensor,
  options: TokenScoreOptions = {},
): TokenScores {
  const stats = inChunks(
    cfg,
    hidden,
    options,
    TOKEN_STATS_WIDTH,
    (rows, first) =>
      tokenStats(lmHeadPieces(cfg, w, rows), targets, {
        vocab: cfg.vocabSize,
        temperature: options.temperature,
        targetOffset: first,
      }),
  );
  const lead = targets.shape;
  return {
    logp: reshape(statsColumn(stats, 0), lead),
    entropy: reshape(statsColumn(stats, 1), lead),
  };
}

/**
 * `nec = H sum p^2 + sum p^2 log p` (the entropy-change signal of Clip_V) of each token's
 * next-token distribution at `temperature`, shaped as `hidden` without its last axis, from the
 * logits of one chunk of tokens at a time (each chunk's whole vocabulary: the softmax squared
 * needs every column together). Not differentiated.
 */
export function tokenNec(
  cfg: ModelConfig,
  w: WeightLookup,
  hidden: Tensor,
  options: TokenScoreOptions = {},
): Tensor {
  const temperature = options.temperature ?? 1;
  const nec = inChunks(cfg, hidden, options, 1, (rows) => {
    const head = lmHead(cfg, w, rows);
    const logits = temperature === 1 ? head : scale(head, 1 / temperature);
    const p = softmax(logits);
    const p2 = mul(p, p);
    const sum = (x: Tensor) => sumLast(x, { keepDim: false });
    return add(mul(tokenEntropy(logits), sum(p2)), sum(mul(p2, logSoftmax(logits))));
  });
  return reshape(nec, hidden.shape.slice(0, -1));
}

/**
 * `perChunk(rows [count, width], first)` (giving [count, columns]) over the tokens of `hidden` in
 * chunks of {@link TokenScoreOptions.chunkTokens}, joined in order into [tokens, columns].
 */
function inChunks(
  cfg: ModelConfig,
  hidden: Tensor,
  options: TokenScoreOptions,
  columns: number,
  perChunk: (rows: Tensor, first: number) => Tensor,
): Tensor {
  const width = hidden.lastDim;
  const tokens = hidden.size / width;
  const step = options.chunkTokens ?? chunkTokens(cfg.vocabSize);
  const flat = reshape(hidden, [1, tokens * width]);
  const chunks: Tensor[] = [];
  for (let first = 0; first < tokens; first += step) {
    const count = Math.min(step, tokens - first);
    const chunkOf = () => {
      const rows = count === tokens ? hidden : sliceLast(flat, first * width, count * width);
      return perChunk(reshape(rows, [count, width]), first);
    };
    chunks.push(
      options.recompute && count < tokens ? checkpoint(hidden.graph, chunkOf) : chunkOf(),
    );
  }
  return chunks.length === 1 ? chunks[0] : joinRows(chunks, tokens, columns);
}

/** Chunks [count, columns] joined in order into [tokens, columns]. */
function joinRows(chunks: readonly Tensor[], tokens: number, columns: number): Tensor {
  let first = 0;
  const placed = chunks.map((c) => {
    const row = padLast(reshape(c, [1, c.size]), first * columns, tokens * columns);
    first += c.size / columns;
    return row;
  });
  return reshape(placed.reduce((a, b) => add(a, b)), [tokens, columns]);
}
