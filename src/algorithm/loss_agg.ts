/**
 * Loss aggregation (`loss_agg_mode`, verl's semantics) of per-token losses [B, T] under a 0/1
 * mask [B, T] into a scalar, as graph ops, plus the masked means the metrics use. Denominators
 * get +1e-8 as in verl, so a fully masked sequence adds 0 instead of NaN; in the seq-mean modes
 * it still counts as a sequence of the batch (verl's `mean` over the batch does the same).
 */

import { sameShape, type Tensor } from "../graph/tensor.ts";
import { div, mul } from "../ops/binary.ts";
import { meanLast, sumLast } from "../ops/reduce.ts";
import { reshape } from "../ops/reshape.ts";
import { affine, scale } from "../ops/unary.ts";
import { type Args, checkChoice } from "../util/registry.ts";

/** The aggregation modes, named as in verl and Trinity. */
export const LOSS_AGG_MODES = [
  "token-mean",
  "seq-mean-token-sum",
  "seq-mean-token-mean",
  "seq-mean-token-sum-norm",
] as const;
/** One of {@link LOSS_AGG_MODES}. */
export type LossAggMode = typeof LOSS_AGG_MODES[number];

/** A scalar loss term and the scalar metrics that come with it, all graph tensors of shape []. */
export interface LossTerm {
  loss: Tensor;
  metrics: Record<string, Tensor>;
}

/** `loss_agg_mode` and `loss_scale_factor` defaults of the components that aggregate tokens. */
export const LOSS_AGG_DEFAULTS = { loss_agg_mode: "token-mean", loss_scale_factor: null } as const;

/** Added to every count in a denominator (verl's `masked_mean`). */
const COUNT_EPS = 1e-8;

/**
 * Aggregates per-token `values` [B, T] under `mask` [B, T] (1 = counts) into a scalar [].
 *
 * - `token-mean`: sum(v * m) / sum(m), every token of the batch weighs the same.
 * - `seq-mean-token-sum`: mean over sequences of each sequence's sum.
 * - `seq-mean-token-mean`: mean over sequences of each sequence's mean.
 * - `seq-mean-token-sum-norm`: sum(v * m) / `scaleFactor` (Dr. GRPO; verl's
 *   `loss_scale_factor`), a constant so long and short answers weigh by their length;
 *   `scaleFactor` defaults to T, which is only constant if T is (pad to the max length).
 */
export function aggregateLoss(
  values: Tensor,
  mask: Tensor,
  mode: LossAggMode,
  scaleFactor: number | null = null,
): Tensor {
  checkTokens("aggregate a loss", values, mask);
  const tokens = values.shape[1];
  const masked = mul(values, mask);
  switch (mode) {
    case "token-mean":
      return maskedMean(values, mask);
    case "seq-mean-token-sum":
      return meanAll(sumLast(masked));
    case "seq-mean-token-mean":
      return meanAll(maskedRowMean(values, mask));
    case "seq-mean-token-sum-norm":
      return scale(total(masked), 1 / (scaleFactor ?? tokens));
  }
}

/**
 * `aggregateLoss` with the `loss_agg_mode` and `loss_scale_factor` of a component's `args`;
 * `component` (e.g. `policy loss fn "ppo"`) names it when the mode is unknown.
 */
export function aggregateByArgs(
  component: string,
  args: Args,
  values: Tensor,
  mask: Tensor,
): Tensor {
  const mode = checkChoice(component, "loss_agg_mode", args.loss_agg_mode, LOSS_AGG_MODES);
  return aggregateLoss(values, mask, mode, args.loss_scale_factor as number | null);
}

/** Mean of `values` over the tokens where `mask` is 1, over the whole batch: a scalar []. */
export function maskedMean(values: Tensor, mask: Tensor): Tensor {
  checkTokens("take a masked mean", values, mask);
  return div(total(mul(values, mask)), affine(total(mask), 1, COUNT_EPS));
}

/** Mean of each row of `values` [B, T] over the tokens where `mask` is 1: [B, 1]. */
export function maskedRowMean(values: Tensor, mask: Tensor): Tensor {
  checkTokens("take a masked row mean", values, mask);
  return div(sumLast(mul(values, mask)), affine(sumLast(mask), 1, COUNT_EPS));
}

/** Sum of all elements: a scalar []. */
function total(x: Tensor): Tensor {
  return sumLast(reshape(x, [x.size]), { keepDim: false });
}

/** Mean of all elements (e.g. of per-sequence values [B, 1]): a scalar []. */
export function meanAll(x: Tensor): Tensor {
  return meanLast(reshape(x, [x.size]), { keepDim: false });
}

/** Throws unless `values` and `mask` are both f32 [B, T]. */
function checkTokens(action: string, values: Tensor, mask: Tensor): void {
  if (values.rank !== 2 || !sameShape(values.shape, mask.shape) || mask.dtype !== "f32") {
    throw new Error(
      `Cannot ${action}: expected values and an f32 mask of one shape [B, T], received ${values} and ${mask}`,
    );
  }
}
