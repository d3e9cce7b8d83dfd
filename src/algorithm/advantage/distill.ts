/**
 * On-policy distillation advantages (Trinity's `on_policy_distill` and `jsd`, after Tinker's
 * on-policy distillation): per token, from the log-probs of the sampled tokens under the
 * student that sampled them (`logprobs`) and under a teacher (`teacherLogprobs`, which the
 * workflow records). `on_policy_distill`: `kl_coef * (teacher - student)`, the negative
 * reverse-KL estimate. `jsd`: `-kl_coef * JSD` with `JSD = beta * (t - m) + (1 - beta) * (s - m)`,
 * `m = log(beta e^t + (1 - beta) e^s)` (beta = `lambda_coef`; 0 gives `s - t`, 1 gives `t - s`),
 * log-probs divided by `temperature` first. Both are computed by the trainer, 0 off the action
 * mask. `chunk_size` (Trinity's memory knob) is accepted and not needed.
 */

import type { Args } from "../../util/registry.ts";
import {
  type AdvantageFn,
  type Advantages,
  type AdvantageSample,
  checkLength,
  mean,
  std,
} from "./advantage_fn.ts";

/** The student and teacher log-probs of sample `i`, checked. */
function logprobsOf(fn: string, sample: AdvantageSample, i: number) {
  const { logprobs, teacherLogprobs, actionMask } = sample;
  if (!logprobs || !teacherLogprobs) {
    throw new Error(
      `Cannot compute advantage fn "${fn}": sample ${i} has no teacher log-probs (the workflow records them: on_policy_distill_workflow)`,
    );
  }
  checkLength(fn, i, "teacherLogprobs", teacherLogprobs, actionMask.length);
  checkLength(fn, i, "logprobs", logprobs, actionMask.length);
  return { s: logprobs, t: teacherLogprobs };
}

/** Per-token advantages `value(s, t)` on the action tokens, with the per-sequence sums logged. */
function perTokenAdvantages(
  fn: string,
  samples: readonly AdvantageSample[],
  value: (s: number, t: number) => number,
  divergence: string,
): Advantages {
  const sums: number[] = [];
  const perToken = samples.map((sample, i) => {
    const { s, t } = logprobsOf(fn, sample, i);
    const out = Float32Array.from(sample.actionMask, (m, k) => (m ? value(s[k], t[k]) : 0));
    sums.push(out.reduce((a, b) => a + b, 0));
    return out;
  });
  return {
    perSequence: null,
    perToken,
    returns: perToken.map((a) => a.slice()),
    skipped: samples.map(() => false),
    metrics: {
      [`${divergence}/mean`]: -mean(sums),
      "advantages/mean": mean(sums),
      [`${divergence}/std`]: std(sums),
    },
  };
}

/** `kl_coef * (teacher - student)` per token. */
export const onPolicyDistillAdvantage: AdvantageFn = {
  defaultArgs: { kl_coef: 1.0 },
  computeInTrainer: true,
  needs: ["logprobs", "teacherLogprobs"],
  compute: (samples, args: Args) => {
    const coef = args.kl_coef as number;
    return perTokenAdvantages("on_policy_distill", samples, (s, t) => coef * (t - s), "kl");
  },
};

/** `log(e^a + e^b)`, stable. */
function logAddExp(a: number, b: number): number {
  const top = Math.max(a, b);
  return top === -Infinity ? top : top + Math.log(Math.exp(a - top) + Math.exp(b - top));
}

/** The per-token Jensen-Shannon estimate of student `s` and teacher `t` log-probs. */
export function jsdPerToken(s: number, t: number, beta: number): number {
  if (beta === 0) return s - t;
  if (beta === 1) return t - s;
  const m = logAddExp(s + Math.log1p(-beta), t + Math.log(beta));
  return beta * (t - m) + (1 - beta) * (s - m);
}

/** `-kl_coef * JSD` per token. */
export const jsdAdvantage: AdvantageFn = {
  defaultArgs: { lambda_coef: 0.5, kl_coef: 1.0, temperature: 1.0, chunk_size: null },
  computeInTrainer: true,
  needs: ["logprobs", "teacherLogprobs"],
  compute: (samples, args: Args) => {
    const [beta, coef, temperature] = [
      args.lambda_coef,
      args.kl_coef,
      args.temperature,
    ] as number[];
    if (!(beta >= 0 && beta <= 1) || !(temperature > 0)) {
      throw new Error(
        `Cannot configure advantage fn "jsd": expected lambda_coef in [0, 1] and temperature > 0, received ${beta} and ${temperature}`,
      );
    }
    const value = (s: number, t: number) =>
      -coef * jsdPerToken(s / temperature, t / temperature, beta);
    return perTokenAdvantages("jsd", samples, value, "jsd");
  },
};
