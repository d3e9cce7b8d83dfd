/**
 * Learning-rate schedules as pure functions of the optimizer step, configured with the keys of
 * `algorithm.optimizer` (Trinity-RFT / verl's `optim` keys, camel-cased as everywhere in the
 * code). Warmup is linear from 0 (the Hugging Face schedulers verl uses); after it the rate
 * stays constant, or decays by cosine or linearly to `lr * minLrRatio`. No restarts, cycles other
 * than a half cosine, or polynomial decay.
 */

/** A schedule: `algorithm.optimizer`'s rate keys and the steps its decays span. */
export interface LrSchedule {
  /** Peak learning rate (`lr`). */
  lr: number;
  /** Steps of linear warmup from 0 to `lr` (`lr_warmup_steps`; default 0). */
  lrWarmupSteps?: number;
  /** Shape after warmup (`warmup_style`): "constant" (default), "cosine" or "linear". */
  warmupStyle?: "constant" | "cosine" | "linear";
  /** Final rate of "cosine" and "linear" as a fraction of `lr` (`min_lr_ratio`; default 0). */
  minLrRatio?: number;
  /** Steps the decay spans, warmup included (`buffer.total_steps`); "cosine" and "linear" need it. */
  totalSteps?: number;
}

/**
 * The learning rate of optimizer step `step` (0-based: the first update uses step 0):
 * - warmup, step < W: lr * step / W (so step 0 has lr 0 when W > 0, as in verl);
 * - "constant": lr;
 * - "cosine": lr * (r + (1 - r) * (1 + cos(pi * q)) / 2);
 * - "linear": lr * (r + (1 - r) * (1 - q));
 * with W the warmup steps, r = minLrRatio and q = min(1, (step - W) / max(1, total - W)):
 * past `totalSteps` the rate stays at lr * r.
 */
export function learningRate(schedule: LrSchedule, step: number): number {
  const { lr, lrWarmupSteps: warmup = 0, warmupStyle: style = "constant", minLrRatio: r = 0 } =
    schedule;
  if (!Number.isInteger(step) || step < 0) {
    throw new Error(`Cannot compute learning rate: expected a step >= 0, received ${step}`);
  }
  if (!(r >= 0 && r <= 1)) {
    throw new Error(`Cannot compute learning rate: expected minLrRatio in [0, 1], received ${r}`);
  }
  if (!(Number.isInteger(warmup) && warmup >= 0)) {
    throw new Error(
      `Cannot compute learning rate: expected lrWarmupSteps an integer >= 0, received ${warmup}`,
    );
  }
  const total = schedule.totalSteps;
  if (style !== "constant" && !(total !== undefined && Number.isInteger(total) && total > 0)) {
    throw new Error(
      `Cannot compute learning rate: warmupStyle "${style}" needs a positive integer totalSteps, received ${total}`,
    );
  }
  if (step < warmup) return (lr * step) / warmup;
  if (style === "constant") return lr;
  const q = Math.min(1, (step - warmup) / Math.max(1, total! - warmup));
  const shape = style === "cosine" ? (1 + Math.cos(Math.PI * q)) / 2 : 1 - q;
  return lr * (r + (1 - r) * shape);
}
