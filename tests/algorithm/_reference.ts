/**
 * f64 CPU references the algorithm tests share: loss aggregation over [B, T] with a mask (verl's
 * formulas, written as plain loops) and a tiny runner for scalar losses and their gradients.
 */

import { grad } from "../../src/graph/autodiff.ts";
import type { Tensor } from "../../src/graph/tensor.ts";
import type { LossAggMode } from "../../src/algorithm/loss_agg.ts";
import { runOps, type TestInput } from "../_harness.ts";
import { configure } from "../../src/util/registry.ts";
import { POLICY_LOSS_FN } from "../../src/algorithm/policy_loss/mod.ts";

/** Tolerance of GPU values and gradients against the f64 references (1e-5 relative). */
export const TIGHT = { atol: 1e-6, rtol: 1e-5 };

/** A [B, T] test input from rows of numbers. */
export function rows(values: readonly (readonly number[])[]): TestInput {
  return { shape: [values.length, values[0].length], data: Float32Array.from(values.flat()) };
}

/** A [B] test input. */
export function vector(values: readonly number[]): TestInput {
  return { shape: [values.length], data: Float32Array.from(values) };
}

/** `aggregateLoss` in f64: `values` and `mask` are [B, T] row-major. */
export function aggregateRef(
  values: ArrayLike<number>,
  mask: ArrayLike<number>,
  batch: number,
  mode: LossAggMode,
  scaleFactor: number | null = null,
): number {
  const tokens = values.length / batch;
  let sum = 0;
  let count = 0;
  let seqSums = 0;
  let seqMeans = 0;
  for (let b = 0; b < batch; b++) {
    let rowSum = 0;
    let rowCount = 0;
    for (let t = 0; t < tokens; t++) {
      rowSum += values[b * tokens + t] * mask[b * tokens + t];
      rowCount += mask[b * tokens + t];
    }
    sum += rowSum;
    count += rowCount;
    seqSums += rowSum;
    seqMeans += rowSum / (rowCount + 1e-8);
  }
  switch (mode) {
    case "token-mean":
      return sum / (count + 1e-8);
    case "seq-mean-token-sum":
      return seqSums / batch;
    case "seq-mean-token-mean":
      return seqMeans / batch;
    case "seq-mean-token-sum-norm":
      return sum / (scaleFactor ?? tokens);
  }
}

/**
 * Runs a scalar loss built from `inputs` and returns its value, the named scalar metrics and
 * the gradient w.r.t. input 0 (logp, or logits).
 */
export async function runLoss(
  inputs: readonly TestInput[],
  build: (...xs: Tensor[]) => { loss: Tensor; metrics: Record<string, Tensor> },
): Promise<{ loss: number; metrics: Record<string, number>; grad: Float32Array }> {
  let names: string[] = [];
  const outs = await runOps(inputs, (...xs) => {
    const { loss, metrics } = build(...xs);
    names = Object.keys(metrics);
    return [loss, grad(loss, [xs[0]])[0], ...names.map((n) => metrics[n])];
  });
  return {
    loss: outs[0][0],
    grad: outs[1] as Float32Array,
    metrics: Object.fromEntries(names.map((n, i) => [n, outs[i + 2][0]])),
  };
}

/** Old log-probs giving importance ratios `ratios` for `logp` (both as nested rows). */
export function oldFor(logp: number[][], ratios: number[][]): TestInput {
  return rows(logp.map((row, b) => row.map((v, t) => v - Math.log(ratios[b][t]))));
}

/** Runs policy loss `name` with `args` over the inputs (logp, oldLogp, advantages, mask). */
export function runPolicyLoss(name: string, args: Record<string, unknown>, inputs: TestInput[]) {
  const { entry, args: resolved } = configure(POLICY_LOSS_FN, name, args);
  return runLoss(
    inputs,
    (logp, oldLogp, advantages, mask) => entry.build({ logp, oldLogp, advantages, mask }, resolved),
  );
}
