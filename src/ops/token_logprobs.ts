/**
 * Per-row token statistics over a vocabulary held in pieces: with u = logits / temperature, the
 * log-probability of each target token, the softmax entropy, logZ and the mean of u, computed
 * row by row in one pass over each piece without materialising the log-softmax (or the joined
 * logits: the pieces are the LM head's row shards or any split of the vocabulary); the
 * temperature is folded into the kernels. The backward is one op per piece, a single pass over
 * its logits with no reduction. A target outside [0, vocab) (a negative i32 included) gives
 * log-prob 0 and no gradient, like an ignore index. f32 logits only.
 * Shader: shaders/token_logprobs.wgsl
 * Reference: src/reference/token_logprobs.ts
 * Test: tests/ops/token_logprobs_test.ts
 */

import type { GpuContext } from "../gpu/device.ts";
import type { KernelLaunch, OpDef } from "../graph/op.ts";
import { formatShape, sameShape, type Tensor } from "../graph/tensor.ts";
import { checkLastAxisInput, rowLaunch } from "./row_launch.ts";
import { reshape } from "./reshape.ts";
import { sliceLast } from "./slice.ts";
import { TOKEN_STATS_WIDTH, tokenStatsRef } from "../reference/token_logprobs.ts";

export { TOKEN_STATS_WIDTH };

/** Where a piece of the vocabulary starts: its first column's token id. */
export interface VocabPiece {
  logits: Tensor;
  first: number;
}

/** Attributes of the statistics op: the pieces' first ids, the whole vocabulary and more. */
interface StatsAttrs {
  firsts: readonly number[];
  vocab: number;
  /** 1 / temperature. */
  invTemp: number;
  /** Row r reads its target at `offset + r` of the targets tensor. */
  offset: number;
}

/** Attributes of one piece's backward. */
interface PieceGradAttrs extends StatsAttrs {
  first: number;
}

/** The launch of `entry` of `shaders/token_logprobs.wgsl` over the rows of `z`. */
function statsLaunch(
  gpu: GpuContext,
  entry: "forward" | "backward",
  z: Tensor,
  buffers: readonly GPUBuffer[],
  attrs: StatsAttrs,
  piece: { first: number; begin: boolean; finish: boolean },
): KernelLaunch {
  return rowLaunch(gpu, "token_logprobs", entry, {}, z, buffers, {
    first: piece.first,
    vocab: attrs.vocab,
    offset: attrs.offset,
    inv_temp: { f32: attrs.invTemp },
    begin: Number(piece.begin),
    finish: Number(piece.finish),
  });
}

/** Throws unless `targets` holds integers for rows `offset` .. `offset + rows - 1`. */
function checkTargets(op: string, rows: number, targets: Tensor, offset: number): void {
  if ((targets.dtype !== "i32" && targets.dtype !== "u32") || targets.size < offset + rows) {
    throw new Error(
      `Cannot apply "${op}": expected i32 or u32 targets with at least ${
        offset + rows
      } values (${rows} rows from ${offset}), received ${targets}`,
    );
  }
}

/** Throws unless the pieces are f32 rows of one leading shape covering disjoint columns. */
function checkPieces(pieces: readonly Tensor[], attrs: StatsAttrs): void {
  const lead = pieces[0].shape.slice(0, -1);
  pieces.forEach((z, k) => {
    checkLastAxisInput("token_stats", z);
    const first = attrs.firsts[k];
    const next = attrs.firsts[k + 1] ?? attrs.vocab;
    if (!sameShape(z.shape.slice(0, -1), lead) || first + z.lastDim > next) {
      throw new Error(
        `Cannot apply "token_stats" to piece ${k} ${z}: expected rows ${formatShape(lead)} and ` +
          `at most ${next - first} columns from token ${first}`,
      );
    }
  });
}

/** Gradient of one piece's logits from the statistics' gradient (see the file comment). */
const PIECE_GRAD: OpDef<PieceGradAttrs> = {
  name: "token_stats_backward",
  output([z, targets, stats, g], attrs) {
    checkLastAxisInput("token_stats_backward", z);
    checkTargets("token_stats_backward", z.size / z.lastDim, targets, attrs.offset);
    if (!sameShape(stats.shape, g.shape)) {
      throw new Error(`Cannot apply "token_stats_backward": gradient ${g} differs from ${stats}`);
    }
    return { shape: z.shape, dtype: "f32" };
  },
  launch(ctx, [z, targets, stats, g], out, attrs) {
    const buffers = [z.buffer, targets.buffer, stats.buffer, g.buffer, out.buffer];
    const piece = { first: attrs.first, begin: true, finish: true };
    return [statsLaunch(ctx.gpu, "backward", z.tensor, buffers, attrs, piece)];
  },
};

const TOKEN_STATS: OpDef<StatsAttrs> = {
  name: "token_stats",
  output([targets, ...pieces], attrs) {
    if (pieces.length === 0 || pieces.length !== attrs.firsts.length) {
      throw new Error(`Cannot apply "token_stats": expected one first id per piece`);
    }
    checkPieces(pieces, attrs);
    checkTargets("token_stats", pieces[0].size / pieces[0].lastDim, targets, attrs.offset);
    return { shape: [...pieces[0].shape.slice(0, -1), TOKEN_STATS_WIDTH], dtype: "f32" };
  },
  launch(ctx, [targets, ...pieces], out, attrs) {
    return pieces.map((z, k) =>
      statsLaunch(
        ctx.gpu,
        "forward",
        z.tensor,
        [z.buffer, targets.buffer, z.buffer, z.buffer, out.buffer],
        attrs,
        { first: attrs.firsts[k], begin: k === 0, finish: k === pieces.length - 1 },
      )
    );
  },
  reference([targets, ...pieces], [, ...tensors], attrs) {
    const rows = tensors[0].size / tensors[0].lastDim;
    const joined = new Float64Array(rows * attrs.vocab).fill(-Infinity);
    pieces.forEach((z, k) => {
      const cols = tensors[k].lastDim;
      for (let r = 0; r < rows; r++) {
        for (let c = 0; c < cols; c++) {
          joined[r * attrs.vocab + attrs.firsts[k] + c] = z[r * cols + c];
        }
      }
    });
    const rowTargets = Array.from({ length: rows }, (_, r) => targets[attrs.offset + r]);
    return tokenStatsRef(joined, attrs.vocab, rowTargets, 1 / attrs.invTemp);
  },
  backward(grad, [targets, ...pieces], stats, attrs) {
    return [
      null,
      ...pieces.map((z, k) =>
        grad.graph.apply(PIECE_GRAD, [z, targets, stats, grad], {
          ...attrs,
          first: attrs.firsts[k],
        })
      ),
    ];
  },
};

/** Options of {@link tokenStats}. */
export interface TokenStatsOptions {
  /** Tokens of the whole vocabulary (default: the end of the last piece). */
  vocab?: number;
  /** Logits are divided by this first (as the sampler does); default 1. */
  temperature?: number;
  /** Row r of the logits reads its target at index `targetOffset + r`; default 0. */
  targetOffset?: number;
}

/**
 * `[logp, entropy, logZ, mean]` per row of the logits held in `pieces` (each [..., cols] over
 * token ids `first` .. `first + cols - 1`, in order, one leading shape), giving [..., 4], with
 * u = logits / temperature: logp = log_softmax(u)[target], entropy = -sum(p log p), logZ =
 * logsumexp(u), mean = sum(p u). `targets` (i32 or u32, read flat from `targetOffset`) holds
 * one token id per row. Differentiable with respect to every piece.
 */
export function tokenStats(
  pieces: readonly VocabPiece[],
  targets: Tensor,
  options: TokenStatsOptions = {},
): Tensor {
  if (pieces.length === 0) throw new Error(`Cannot apply "token_stats": no logits`);
  const last = pieces[pieces.length - 1];
  const temperature = options.temperature ?? 1;
  if (!(temperature > 0)) {
    throw new Error(`Cannot apply "token_stats": temperature must be > 0, received ${temperature}`);
  }
  return targets.graph.apply(TOKEN_STATS, [targets, ...pieces.map((p) => p.logits)], {
    firsts: pieces.map((p) => p.first),
    vocab: options.vocab ?? last.first + last.logits.lastDim,
    invTemp: 1 / temperature,
    offset: options.targetOffset ?? 0,
  });
}

/** Column `k` of statistics [..., 4] from {@link tokenStats}, as [...]. */
export function statsColumn(stats: Tensor, k: number): Tensor {
  return reshape(sliceLast(stats, k, 1), stats.shape.slice(0, -1));
}

/**
 * Log-probability of each target token: `log_softmax(logits)[..., target]` for `logits` [..., V]
 * (f32) and `targets` [...] (i32 or u32), giving [...]. A target outside [0, V) gives 0 and no
 * gradient. Differentiable with respect to `logits`.
 */
export function tokenLogprobs(logits: Tensor, targets: Tensor): Tensor {
  checkLastAxisInput("token_logprobs", logits);
  const lead = logits.shape.slice(0, -1);
  if (!sameShape(targets.shape, lead)) {
    throw new Error(
      `Cannot apply "token_logprobs" to ${logits}: expected targets of shape ${
        formatShape(lead)
      }, received ${targets}`,
    );
  }
  return statsColumn(tokenStats([{ logits, first: 0 }], targets), 0);
}

/**
 * Entropy of `softmax(logits)` per row: `logsumexp(z) - sum(softmax(z) * z)` for `logits`
 * [..., V] (f32), giving [...]. Differentiable.
 */
export function tokenEntropy(logits: Tensor): Tensor {
  checkLastAxisInput("token_entropy", logits);
  const rows = logits.size / logits.lastDim;
  // No target is read into a log-prob here: every row's target is the ignored id V.
  const targets = logits.graph.constant(
    new Uint32Array(rows).fill(logits.lastDim),
    [rows],
    "no_targets",
  );
  return statsColumn(tokenStats([{ logits, first: 0 }], targets), 1);
}
