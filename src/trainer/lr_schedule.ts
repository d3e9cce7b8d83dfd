/**
 * Learning-rate schedules as pure functions of the optimizer step, configured with the
 * Trinity-RFT / verl `optim` keys. Warmup is linear from 0 (the Hugging Face schedulers verl
 * uses); after it the rate stays constant, or decays by cosine or linearly to
 * `lr * min_lr_ratio`. No restarts, cycles other than a half cosine, or polynomial decay.
 */

/** Schedule keys, as in a Trinity-RFT / verl `actor.optim` config section. */
export interface LrScheduleConfig {
  /** Peak learning rate. */
  lr: number;
  /** Steps of linear warmup from 0 to `lr` (default 0; a negative value defers to the ratio). */
  lr_warmup_steps?: number;
  /** Warmup as a fraction of `total_training_steps`, used when `lr_warmup_steps` < 0. */
  lr_warmup_steps_ratio?: number;
  /** Shape after warmup: "constant" (default), "cosine" or "linear". */
  warmup_style?: "constant" | "cosine" | "linear";
  /** Final rate of "cosine" and "linear" as a fraction of `lr` (default 0). */
  min_lr_ratio?: number;
  /** Steps the decay spans (warmup included); needed by "cosine", "linear" and the ratio. */
  total_training_steps?: number;
}

/**
 * The learning rate of optimizer step `step` (0-based: the first update uses step 0):
 * - warmup, step < W: lr * step / W (so step 0 has lr 0 when W > 0, as in verl);
 * - "constant": lr;
 * - "cosine": lr * (r + (1 - r) * (1 + cos(pi * q)) / 2);
 * - "linear": lr * (r + (1 - r) * (1 - q));
 * with W the warmup steps, r = min_lr_ratio and q = min(1, (step - W) / max(1, total - W)):
 * past `total_training_steps` the rate stays at lr * r.
 */
export function learningRate(config: LrScheduleConfig, step: number): number {
  const { lr, warmup_style: style = "constant", min_lr_ratio: r = 0 } = config;
  if (!Number.isInteger(step) || step < 0) {
    throw new Error(`Cannot compute learning rate: expected a step >= 0, received ${step}`);
  }
  if (!(r >= 0 && r <= 1)) {
    throw new Error(`Cannot compute learning rate: expected min_lr_ratio in [0, 1], received ${r}`);
  }
  const total = config.total_training_steps;
  const needsTotal = style !== "constant" || (config.lr_warmup_steps ?? 0) < 0;
  if (needsTotal && !(total !== undefined && Number.isInteger(total) && total > 0)) {
    throw new Error(
      `Cannot compute learning rate: warmup_style "${style}" needs a positive integer total_training_steps, received ${total}`,
    );
  }
  const warmup = (config.lr_warmup_steps ?? 0) >= 0
    ? config.lr_warmup_steps ?? 0
    : Math.floor((config.lr_warmup_steps_ratio ?? 0) * total!);
  if (step < warmup) return (lr * step) / warmup;
  if (style === "constant") return lr;
  const q = Math.min(1, (step - warmup) / Math.max(1, total! - warmup));
  const shape = style === "cosine" ? (1 + Math.cos(Math.PI * q)) / 2 : 1 - q;
  return lr * (r + (1 - r) * shape);
}
