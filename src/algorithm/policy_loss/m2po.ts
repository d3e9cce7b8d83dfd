/**
 * M2PO (second-moment trust policy optimization; Trinity's `m2po`, a release after v0.5.2):
 * `-A * r` per token with `r = exp(logp - oldLogp)` (the log-ratio clamped to
 * ±`log_ratio_clip` in the forward pass only: the gradient is the unclamped one), over the
 * tokens M2PO's mask keeps, token-mean over every action token (masked ones count in the
 * denominator, as in the paper). The mask is chosen once per optimizer mini-batch
 * ({@link m2poMask}, the paper's Algorithm 1): among the tokens where PPO's clip would be active
 * (A > 0 and r > 1, or A < 0 and r < 1) the largest squared log-ratios are dropped until their
 * mean is at most `m2_threshold`. The trainer applies it before the mini-batch is cut into
 * micro-batches by zeroing the dropped tokens' advantages, which is the same loss and gradient.
 */

import { add, mul, sub } from "../../ops/binary.ts";
import { stopGradient } from "../../ops/stop_gradient.ts";
import { exp, neg } from "../../ops/unary.ts";
import { clamp } from "../_piecewise.ts";
import { maskedMean } from "../loss_agg.ts";
import type { Args } from "../../util/registry.ts";
import {
  aggregate,
  input,
  type MiniBatchRow,
  type PolicyLossFn,
  type PolicyLossInputs,
} from "./policy_loss_fn.ts";

/** Throws unless the args are M2PO's (finite thresholds, token-mean). */
function checkArgs(args: Args): void {
  const threshold = args.m2_threshold as number;
  const clip = args.log_ratio_clip as number;
  const fail = (what: string) => {
    throw new Error(`Cannot configure policy loss fn "m2po": ${what}`);
  };
  if (!Number.isFinite(threshold) || threshold < 0) {
    fail(`key "m2_threshold" expected a finite number >= 0, received ${threshold}`);
  }
  if (!Number.isFinite(clip) || clip <= 0) {
    fail(`key "log_ratio_clip" expected a finite number > 0, received ${clip}`);
  }
  if (args.loss_agg_mode !== "token-mean") {
    fail(
      `key "loss_agg_mode" expected "token-mean" (the paper's denominator), received ${
        JSON.stringify(args.loss_agg_mode)
      }`,
    );
  }
}

function m2poLoss(inputs: PolicyLossInputs, args: Args) {
  checkArgs(args);
  const fn = "m2po";
  const oldLogp = input(fn, inputs, "oldLogp");
  const advantages = input(fn, inputs, "advantages");
  const c = args.log_ratio_clip as number;
  const logRatio = sub(inputs.logp, oldLogp);
  // Forward: the clamped ratio; backward: the gradient of the unclamped one.
  const stable = add(logRatio, stopGradient(sub(clamp(logRatio, -c, c), logRatio)));
  const ratio = exp(stable);
  const loss = aggregate(fn, args, mul(neg(advantages), ratio), inputs.mask);
  return {
    loss,
    metrics: {
      pg_loss: loss,
      ppo_kl: maskedMean(neg(stable), inputs.mask),
      "ratio/mean": maskedMean(ratio, inputs.mask),
    },
  };
}

/**
 * M2PO's token mask over a whole mini-batch (see the file comment): per row, 1 for the action
 * tokens kept, 0 for those dropped and outside the action mask; with the second moments before
 * and after and the fractions masked and in the trust region.
 */
export function m2poMask(
  rows: readonly MiniBatchRow[],
  threshold: number,
): { mask: number[][]; metrics: Record<string, number> } {
  const mask = rows.map((r) => r.mask.map((m) => (m > 0 ? 1 : 0)));
  const trust: { row: number; col: number; m2: number }[] = [];
  let valid = 0;
  rows.forEach((r, row) => {
    r.mask.forEach((m, col) => {
      if (!(m > 0)) return;
      valid++;
      const logRatio = r.logprobs[col] - r.oldLogprobs[col];
      if (!Number.isFinite(logRatio)) {
        throw new Error(
          `M2PO received a non-finite log-probability ratio (row ${row}, token ${col})`,
        );
      }
      const a = r.advantages[col];
      if ((a > 0 && logRatio > 0) || (a < 0 && logRatio < 0)) {
        trust.push({ row, col, m2: logRatio * logRatio });
      }
    });
  });
  const mean = (xs: readonly { m2: number }[]) =>
    xs.length ? xs.reduce((s, x) => s + x.m2, 0) / xs.length : 0;
  const before = mean(trust);
  let kept = trust;
  if (trust.length && before > threshold) {
    // Stable ascending order; keep the longest prefix whose running mean stays within the bound.
    const sorted = trust.map((t, i) => ({ ...t, i })).sort((x, y) => x.m2 - y.m2 || x.i - y.i);
    let sum = 0, keep = 0;
    sorted.forEach((t, k) => {
      sum += t.m2;
      if (sum / (k + 1) <= threshold) keep = k + 1;
    });
    for (const t of sorted.slice(keep)) mask[t.row][t.col] = 0;
    kept = sorted.slice(0, keep);
  }
  return {
    mask,
    metrics: {
      m2_before: before,
      m2_after: mean(kept),
      masked_fraction: valid ? (trust.length - kept.length) / valid : 0,
      trust_region_fraction: valid ? trust.length / valid : 0,
    },
  };
}

/** `-A * r` over M2PO's mask. */
export const m2poPolicyLoss: PolicyLossFn = {
  defaultArgs: { m2_threshold: 0.04, loss_agg_mode: "token-mean", log_ratio_clip: 20.0 },
  needs: ["oldLogp", "advantages"],
  microBatching: "tokens",
  lossAggMode: () => "token-mean",
  miniBatchAdvantages(args, rows) {
    checkArgs(args);
    const { mask, metrics } = m2poMask(rows, args.m2_threshold as number);
    return {
      advantages: rows.map((r, i) => r.advantages.map((a, t) => (mask[i][t] ? a : 0))),
      metrics,
    };
  },
  build: m2poLoss,
};
