/**
 * The policy loss contract (Trinity's `PolicyLossFn`) as graph ops: named input tensors in, a
 * scalar loss and scalar metric tensors out; and the pieces the built-in losses share (input
 * checks, advantages broadcast over tokens, clip bounds, loss aggregation, the PPO clip mask).
 * Old and reference log-probs are plain graph inputs, so no gradient reaches them.
 */

import { formatShape, sameShape, type Tensor } from "../../graph/tensor.ts";
import { add, mul } from "../../ops/binary.ts";
import { reshape } from "../../ops/reshape.ts";
import { affine, neg } from "../../ops/unary.ts";
import { step } from "../_piecewise.ts";
import { aggregateByArgs, type LossAggMode, type LossTerm } from "../loss_agg.ts";
import type { Args, ArgValue } from "../../util/registry.ts";

/** The tensors a policy loss may read; B sequences of T tokens. */
export interface PolicyLossInputs {
  /** Log-probs of the sampled tokens under the policy being trained [B, T] (differentiated). */
  logp: Tensor;
  /** 1 on the tokens the loss covers (the action mask), 0 elsewhere [B, T], f32. */
  mask: Tensor;
  /** Log-probs under the policy that sampled the tokens [B, T]. */
  oldLogp?: Tensor;
  /** Advantages per sequence [B] or per token [B, T]. */
  advantages?: Tensor;
  /** Log-probs under the reference model [B, T]. */
  refLogp?: Tensor;
  /** 1 for expert (SFT) sequences, 0 for rollouts [B] (`mix`). */
  isExpert?: Tensor;
  /** Scalars [] the loss computes per train step (its `stepScalars`), by name. */
  scalars?: Readonly<Record<string, Tensor>>;
}

/**
 * How a loss may be cut into micro-batches: `tokens`, a per-token loss aggregated by
 * `loss_agg_mode` (sequences may also be packed several per row when every term is token-mean);
 * `rows`, a loss that needs each whole sequence in one row (sequence-level ratios); `pairs`,
 * consecutive rows that belong together (DPO's chosen and rejected).
 */
export type MicroBatchSplit = "tokens" | "rows" | "pairs";

/** Names of the optional inputs. */
export type PolicyLossInputName = Exclude<keyof PolicyLossInputs, "logp" | "mask" | "scalars">;

/** A policy loss. */
export interface PolicyLossFn {
  /** Every argument it takes, with its default. */
  readonly defaultArgs: Args;
  /** The optional inputs it reads (what the trainer must feed; Trinity's `select_keys`). */
  readonly needs: readonly PolicyLossInputName[];
  /**
   * How the trainer may cut a batch into micro-batches whose weighted losses sum to the whole
   * batch's (see {@link MicroBatchSplit}); absent: never cut (a plugin's safe default).
   */
  readonly microBatching?: MicroBatchSplit;
  /**
   * How the loss aggregates tokens, when not by its `loss_agg_mode` arg (the trainer weighs
   * micro-batches by it); absent: `loss_agg_mode`, token-mean when unset.
   */
  lossAggMode?(args: Args): LossAggMode;
  /**
   * Scalars that change with the train step (e.g. CHORD's mu schedule), fed to the graph as
   * `inputs.scalars` each step: the values at 1-based train step `step`.
   */
  stepScalars?(args: Args, step: number): Record<string, number>;
  /**
   * Rewrites the per-token advantages of a whole optimizer mini-batch from the policy's
   * log-probs before the step, before the mini-batch is cut into micro-batches (a selection
   * over all its tokens, as M2PO's mask); returns them with metrics.
   */
  miniBatchAdvantages?(
    args: Args,
    rows: readonly MiniBatchRow[],
  ): { advantages: number[][]; metrics: Record<string, number> };
  /** The loss (a scalar to minimise) and its metrics, built into the inputs' graph. */
  build(inputs: PolicyLossInputs, args: Args): LossTerm;
}

/** One experience of a mini-batch as {@link PolicyLossFn.miniBatchAdvantages} reads it. */
export interface MiniBatchRow {
  /** Log-probs of its tokens under the policy before the step. */
  logprobs: readonly number[];
  /** Log-probs under the policy that sampled it. */
  oldLogprobs: readonly number[];
  advantages: readonly number[];
  /** The action mask. */
  mask: readonly number[];
}

/** Throws unless `logp` and `mask` are f32 [B, T]; returns [B, T]. */
function tokenShape(fn: string, { logp, mask }: PolicyLossInputs): readonly number[] {
  if (logp.rank !== 2 || !sameShape(logp.shape, mask.shape) || mask.dtype !== "f32") {
    throw new Error(
      `Cannot build policy loss fn "${fn}": expected logp and an f32 mask of one shape [B, T], received ${logp} and ${mask}`,
    );
  }
  return logp.shape;
}

/**
 * Input `name` of `inputs`, checked: log-probs have logp's shape [B, T], `advantages` [B] or
 * [B, T] (returned as [B, 1] or [B, T], ready to broadcast), `isExpert` [B] (returned [B, 1]).
 */
export function input(fn: string, inputs: PolicyLossInputs, name: PolicyLossInputName): Tensor {
  const [batch, tokens] = tokenShape(fn, inputs);
  const t = inputs[name];
  const shapes = name === "advantages"
    ? [[batch], [batch, tokens]]
    : name === "isExpert"
    ? [[batch]]
    : [[batch, tokens]];
  if (!t || !shapes.some((s) => sameShape(s, t.shape))) {
    throw new Error(
      `Cannot build policy loss fn "${fn}": input "${name}" expected shape ${
        shapes.map(formatShape).join(" or ")
      }, received ${t ?? "none"}`,
    );
  }
  return t.rank === 1 ? reshape(t, [batch, 1]) : t;
}

/** `[1 - low, 1 + high]` from `clip_range_low` and `clip_range_high` (default `clip_range`). */
export function clipBounds(fn: string, args: Args): [number, number] {
  const pick = (key: string): number => {
    const value: ArgValue = args[key] ?? args.clip_range;
    if (typeof value !== "number" || !(value >= 0)) {
      throw new Error(
        `Cannot configure policy loss fn "${fn}": key "${key}" (or "clip_range") expected a number >= 0, received ${
          JSON.stringify(value)
        }`,
      );
    }
    return value;
  };
  return [1 - pick("clip_range_low"), 1 + pick("clip_range_high")];
}

/** `values` [B, T] aggregated over `mask` as loss `fn`'s `args` say (`loss_agg_mode`). */
export function aggregate(fn: string, args: Args, values: Tensor, mask: Tensor): Tensor {
  return aggregateByArgs(`policy loss fn "${fn}"`, args, values, mask);
}

/**
 * 1 on the tokens PPO's clip removes from the gradient: ratio above `hi` with a positive
 * advantage, or below `lo` with a negative one (verl's `pg_clipfrac` counts these). Computed
 * from the ratio itself, not from comparing clipped and unclipped losses, so rounding inside
 * the clip range never counts as clipping. `advantages` [B, 1] or [B, T].
 */
export function clippedByPpo(ratio: Tensor, advantages: Tensor, lo: number, hi: number): Tensor {
  const above = mul(step(affine(ratio, 1, -hi)), step(advantages));
  const below = mul(step(affine(ratio, -1, lo)), step(neg(advantages)));
  return add(above, below);
}
