/**
 * The advantage fn contract (Trinity's `AdvantageFn` / `GroupAdvantage`) on plain host data, and
 * the helpers the built-in fns share: grouping by task, broadcasting a per-sequence score over
 * the action tokens, token-level rewards, KL-penalised rewards and batch whitening. Runs on the
 * CPU: one scalar per sequence, or one pass over the tokens, is not worth a GPU launch.
 */

import type { Args } from "../../util/registry.ts";

/** One sampled sequence, as an advantage fn sees it. */
export interface AdvantageSample {
  /** Samples of the same task share it (Trinity's task id; GRPO's group). */
  groupId: string | number;
  /**
   * The sequence's reward; null = not applicable (TRL's convention): the sample gets advantage 0
   * on every token, is marked `skipped`, and is left out of every statistic (means, stds).
   */
  reward: number | null;
  /** 1 for tokens the policy generated (actions), 0 otherwise; its length is the sample's T. */
  actionMask: ArrayLike<number>;
  /**
   * Per-token rewards, length T, for the token-level fns (`ppo`, `reinforceplusplus`): e.g. the
   * KL-penalised rewards of {@link klPenalizedRewards}. Default: `reward` on the last action
   * token. The group fns read `reward` only.
   */
  tokenRewards?: ArrayLike<number>;
  /** Critic values per token, length T (`ppo` only). */
  values?: ArrayLike<number>;
  /** Which rollout of its group it is (the experience's run id; `step_wise_grpo`). */
  runId?: number;
  /** Log-probs of the tokens under the policy that sampled them, length T. */
  logprobs?: ArrayLike<number>;
  /** Log-probs of the tokens under a teacher model, length T (on-policy distillation). */
  teacherLogprobs?: ArrayLike<number>;
  /**
   * Per token, length T, from the policy being trained (the trainer's pass before the step;
   * the entropy-clipping fns): `logprobs` of the tokens, `entropy` of the next-token
   * distribution, and `nec` (sum p^2 log p + H sum p^2).
   */
  current?: { logprobs: ArrayLike<number>; entropy: ArrayLike<number>; nec?: ArrayLike<number> };
}

/** What an advantage fn returns, one entry per input sample in input order. */
export interface Advantages {
  /** One advantage per sequence; null where the fn gives per-token values only. */
  perSequence: number[] | null;
  /** Per-token advantages, length T of each sample, 0 on tokens outside the action mask. */
  perToken: Float32Array[];
  /** Per-token returns (value targets), masked the same way; equal to `perToken` for group fns. */
  returns: Float32Array[];
  /**
   * Samples that carry no learning signal by the fn's rules (null reward, a group of one, a
   * group below `std_threshold`); the pipeline may drop them. Their advantages are 0.
   */
  skipped: boolean[];
  /** Scalars for logging. */
  metrics: Record<string, number>;
  /**
   * Per sample, its action mask as the fn leaves it, when the fn drops tokens from training
   * (the entropy-clipping fns); absent: unchanged.
   */
  actionMasks?: Float32Array[];
  /**
   * Indices of samples to train on twice (Trinity's `duplicate_experiences`: kept groups copied
   * in place of skipped ones); absent: none.
   */
  duplicates?: number[];
}

/** What else a fn reads besides rewards and masks (the caller fills these sample fields). */
export type AdvantageInput = "logprobs" | "teacherLogprobs" | "current" | "nec";

/** An advantage fn. */
export interface AdvantageFn {
  /** Every argument it takes, with its default. */
  readonly defaultArgs: Args;
  /**
   * Whether the trainer computes it (it needs trainer-side data such as critic values) rather
   * than the experience pipeline (Trinity's `compute_in_trainer`).
   */
  readonly computeInTrainer: boolean;
  /** The sample fields it reads besides reward, mask and group (absent: none). */
  readonly needs?: readonly AdvantageInput[];
  /** Advantages of `samples` (a whole explore step, all groups together). */
  compute(samples: readonly AdvantageSample[], args: Args): Advantages;
}

/** Indices of the samples with a non-null reward, by group id, in order of first appearance. */
export function groupIndices(samples: readonly AdvantageSample[]): Map<string | number, number[]> {
  const groups = new Map<string | number, number[]>();
  samples.forEach((s, i) => {
    if (s.reward === null) return;
    const group = groups.get(s.groupId);
    if (group) group.push(i);
    else groups.set(s.groupId, [i]);
  });
  return groups;
}

/**
 * Advantages from one score per sequence: each score times the action mask on every token;
 * a null score gives zeros and marks the sample skipped (returns equal advantages).
 */
export function broadcastScores(
  samples: readonly AdvantageSample[],
  scores: readonly (number | null)[],
  metrics: Record<string, number>,
): Advantages {
  const perToken = samples.map((s, i) =>
    Float32Array.from(s.actionMask, (m) => (scores[i] ?? 0) * m)
  );
  return {
    perSequence: scores.map((v) => v ?? 0),
    perToken,
    returns: perToken.map((a) => a.slice()),
    skipped: scores.map((v) => v === null),
    metrics: { ...metrics, skipped_count: scores.filter((v) => v === null).length },
  };
}

/** Mean of `xs` (0 for none). */
export function mean(xs: readonly number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
}

/** Unbiased (n - 1) standard deviation of `xs`, as torch.std; 0 for fewer than two values. */
export function std(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
}

/** Index of the last action token of `mask`, -1 for a fully masked sequence. */
function lastActionToken(mask: ArrayLike<number>): number {
  for (let t = mask.length - 1; t >= 0; t--) if (mask[t]) return t;
  return -1;
}

/**
 * Per-token rewards of `sample`: its `tokenRewards`, or else its reward on the last action
 * token (nothing for a fully masked sequence), as verl places the outcome reward. `fn` names
 * the caller in errors.
 */
export function tokenRewards(sample: AdvantageSample, fn: string, index: number): Float64Array {
  const length = sample.actionMask.length;
  if (sample.tokenRewards) {
    checkLength(fn, index, "tokenRewards", sample.tokenRewards, length);
    return Float64Array.from(sample.tokenRewards);
  }
  const rewards = new Float64Array(length);
  const last = lastActionToken(sample.actionMask);
  if (last >= 0) rewards[last] = sample.reward ?? 0;
  return rewards;
}

/**
 * Token rewards with a KL penalty (the KL fn as reward penalty): `-klCoef * kl[t]` on every
 * action token, plus `reward` on the last one. `kl` is the per-token KL read back from
 * `KlFn.perToken(oldLogp, refLogp)`.
 */
export function klPenalizedRewards(
  reward: number,
  actionMask: ArrayLike<number>,
  kl: ArrayLike<number>,
  klCoef: number,
): Float32Array {
  if (kl.length !== actionMask.length) {
    throw new Error(
      `Cannot penalise rewards by KL: kl has ${kl.length} tokens, the action mask ${actionMask.length}`,
    );
  }
  const out = Float32Array.from(actionMask, (m, t) => -klCoef * kl[t] * m);
  const last = lastActionToken(actionMask);
  if (last >= 0) out[last] += reward;
  return out;
}

/**
 * Whitens `values` in place over the action tokens of the samples not `skipped`, all sequences
 * together (verl's `masked_whiten`: unbiased variance, `(v - mean) / sqrt(var + 1e-8)`), then
 * zeroes tokens outside the action mask and the skipped samples. Returns the mean and std used.
 */
export function whitenTokens(
  values: Float32Array[],
  samples: readonly AdvantageSample[],
  skipped: readonly boolean[],
): { mean: number; std: number } {
  const pooled: number[] = [];
  values.forEach((v, i) => {
    if (skipped[i]) return;
    v.forEach((x, t) => {
      if (samples[i].actionMask[t]) pooled.push(x);
    });
  });
  const m = mean(pooled);
  const s = std(pooled);
  const inv = 1 / Math.sqrt(s * s + 1e-8);
  values.forEach((v, i) => {
    const mask = samples[i].actionMask;
    for (let t = 0; t < v.length; t++) v[t] = skipped[i] || !mask[t] ? 0 : (v[t] - m) * inv;
  });
  return { mean: m, std: s };
}

/** Throws unless `array` (a per-token field of sample `index`) has `length` entries. */
export function checkLength(
  fn: string,
  index: number,
  field: string,
  array: ArrayLike<number>,
  length: number,
): void {
  if (array.length !== length) {
    throw new Error(
      `Cannot compute advantage fn "${fn}": sample ${index} has ${field} of length ${array.length}, expected ${length} (its actionMask length)`,
    );
  }
}
