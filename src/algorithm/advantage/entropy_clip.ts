/**
 * The entropy-dynamics advantage fns Clip_B and Clip_V (arXiv:2602.03392; Trinity's `clipb`
 * and `clipv`): GRPO's group-normalised advantage (verl's form: a group of one has mean 0 and
 * std 1), then some tokens of negative advantage are left out of training by a signal of how
 * each token moves the entropy, read from the policy being trained (the trainer's pass over the
 * batch: log-prob `lp` of the token, entropy `H` of the distribution, and for Clip_V
 * `nec = sum p^2 log p + H sum p^2`). With `S = e^lp (H + lp)`, centred over the batch's action
 * tokens (population std `sigma`): Clip_B drops negative-advantage tokens with
 * `S - mean(S) < -mu * sigma`; Clip_V drops those with `D = nec - S` above `mu * sigma_D`,
 * at most `max_frac` of the tokens (the largest D first, at least one). Nothing is dropped when
 * sigma < 1e-12. Computed by the trainer.
 */

import type { Args } from "../../util/registry.ts";
import type { AdvantageFn, Advantages, AdvantageSample } from "./advantage_fn.ts";
import { broadcastScores, groupIndices, mean, std } from "./advantage_fn.ts";

/** verl's GRPO scores: (r - group mean) / (group std + eps); a group of one: r / (1 + eps). */
function grpoScores(samples: readonly AdvantageSample[], epsilon: number): Advantages {
  const scores: (number | null)[] = samples.map(() => null);
  for (const members of groupIndices(samples).values()) {
    const rewards = members.map((i) => samples[i].reward as number);
    const [m, s] = members.length === 1 ? [0, 1] : [mean(rewards), std(rewards)];
    members.forEach((i, k) => scores[i] = (rewards[k] - m) / (s + epsilon));
  }
  return broadcastScores(samples, scores, {});
}

/** One action token: where it is, its advantage and its signal. */
interface TokenSignal {
  sample: number;
  t: number;
  advantage: number;
  signal: number;
}

/** The action tokens of `samples` with `signal(sample, t)`. */
function actionTokens(
  fn: string,
  samples: readonly AdvantageSample[],
  advantages: Advantages,
  signal: (sample: AdvantageSample, t: number) => number,
): TokenSignal[] {
  const tokens: TokenSignal[] = [];
  samples.forEach((s, i) => {
    if (!s.current) {
      throw new Error(
        `Cannot compute advantage fn "${fn}": sample ${i} has no entropy from the policy (the trainer computes it)`,
      );
    }
    for (let t = 0; t < s.actionMask.length; t++) {
      if (s.actionMask[t]) {
        tokens.push({ sample: i, t, advantage: advantages.perToken[i][t], signal: signal(s, t) });
      }
    }
  });
  return tokens;
}

/** Mean and population std of the tokens' signals. */
function moments(tokens: readonly TokenSignal[]): { m: number; sigma: number } {
  const m = mean(tokens.map((x) => x.signal));
  return { m, sigma: Math.sqrt(mean(tokens.map((x) => (x.signal - m) ** 2))) };
}

/** `advantages` with action masks that leave out `dropped` tokens, and the clip metrics. */
function withDropped(
  samples: readonly AdvantageSample[],
  advantages: Advantages,
  tokens: readonly TokenSignal[],
  dropped: readonly TokenSignal[],
  metrics: Record<string, number>,
): Advantages {
  const masks = samples.map((s) => Float32Array.from(s.actionMask));
  for (const x of dropped) masks[x.sample][x.t] = 0;
  const frac = (pick: (x: TokenSignal) => boolean) => {
    const all = tokens.filter(pick).length;
    return all ? dropped.filter(pick).length / all : 0;
  };
  return {
    ...advantages,
    actionMasks: masks,
    metrics: {
      ...metrics,
      frac_clipped: frac(() => true),
      frac_clipped_pos: frac((x) => x.advantage > 0),
      frac_clipped_neg: frac((x) => x.advantage < 0),
    },
  };
}

/** `S = e^lp (H + lp)` of token t of `s`. */
function entropySignal(s: AdvantageSample, t: number): number {
  const lp = s.current!.logprobs[t];
  return Math.exp(lp) * (s.current!.entropy[t] + lp);
}

/** Clip_B: negative-advantage tokens whose S is more than mu sigma below the mean. */
export const clipbAdvantage: AdvantageFn = {
  defaultArgs: { epsilon: 1e-6, mu: 2.5 },
  computeInTrainer: true,
  needs: ["current"],
  compute(samples, args: Args) {
    const advantages = grpoScores(samples, args.epsilon as number);
    const tokens = actionTokens("clipb", samples, advantages, entropySignal);
    const { m, sigma } = moments(tokens);
    const mu = args.mu as number;
    const dropped = sigma < 1e-12
      ? []
      : tokens.filter((x) => x.advantage < 0 && x.signal - m < -mu * sigma);
    return withDropped(samples, advantages, tokens, dropped, { ES: m, varS: sigma ** 2 });
  },
};

/** Clip_V: negative-advantage tokens whose D is above mu sigma, capped at max_frac. */
export const clipvAdvantage: AdvantageFn = {
  defaultArgs: { epsilon: 1e-6, mu: 8.5, max_frac: 1e-4 },
  computeInTrainer: true,
  needs: ["current", "nec"],
  compute(samples, args: Args) {
    const advantages = grpoScores(samples, args.epsilon as number);
    const tokens = actionTokens("clipv", samples, advantages, (s, t) => {
      if (!s.current!.nec) throw new Error('Cannot compute advantage fn "clipv": no nec per token');
      return s.current!.nec[t] - entropySignal(s, t);
    });
    const { sigma } = moments(tokens);
    const mu = args.mu as number;
    let dropped = sigma < 1e-12
      ? []
      : tokens.filter((x) => x.advantage < 0 && x.signal > mu * sigma);
    const cap = Math.max(Math.floor((args.max_frac as number) * tokens.length), 1);
    if (dropped.length > cap) {
      dropped = [...dropped].sort((a, b) => b.signal - a.signal).slice(0, cap);
    }
    return withDropped(samples, advantages, tokens, dropped, { stdD: sigma });
  },
};
