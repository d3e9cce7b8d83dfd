/**
 * `rlcr_reward` (Trinity's `RLCRRewardFn`, "Beyond binary rewards: RL for calibrated
 * confidence"): five weighted components of a math response that ends with exactly
 * `<think>...</think><answer>...</answer><analysis>...</analysis><confidence>q</confidence>`
 * (only whitespace between and after; no other reserved tag nesting): `format` 1 for that
 * chain, `accuracy` 1 when the answer block's final answer equals the reference's (rft's math
 * verifier), `brier` 1 - (accuracy - q)^2, `mean_confidence` the last closed confidence q in
 * [0, 1] (even when the chain is broken) and `confidence_one_or_zero` 1 when that q is below
 * 0.01 or above 0.99. Each is multiplied by its weight (`weights`, all five keys); the reward is
 * their sum and the metrics are the weighted components.
 */

import { taskAnswer } from "../../buffer/task.ts";
import { mathCorrect } from "./math.ts";
import type { RewardFnFactory } from "./reward_fn.ts";

/** The reserved tags, in the order the response must end with them. */
const TERMINAL = ["think", "answer", "analysis", "confidence"] as const;
const RESERVED = /<\/?(?:think|answer|analysis|confidence)>/g;

/** A confidence in [0, 1], or undefined. */
function confidenceOf(payload: string): number | undefined {
  const text = payload.trim();
  const q = text === "" ? NaN : Number(text);
  return Number.isFinite(q) && q >= 0 && q <= 1 ? q : undefined;
}

/** The last closed `<confidence>` payload, when nothing reserved lies inside it. */
function lastConfidence(response: string): number | undefined {
  const open = response.lastIndexOf("<confidence>");
  const close = response.lastIndexOf("</confidence>");
  if (open < 0 || close < 0 || open > close) return undefined;
  const payload = response.slice(open + "<confidence>".length, close);
  return new RegExp(RESERVED.source).test(payload) ? undefined : confidenceOf(payload);
}

/** The answer and confidence of a well-formed terminal chain, or undefined. */
function terminalChain(response: string): { answer: string; confidence: number } | undefined {
  const tags = [...response.matchAll(RESERVED)];
  let open: string | undefined;
  for (const tag of tags) {
    const closing = tag[0].startsWith("</");
    const name = tag[0].replace(/[</>]/g, "");
    if (closing ? open !== name : open !== undefined) return undefined;
    open = closing ? undefined : name;
  }
  if (open !== undefined || tags.length < 2 * TERMINAL.length) return undefined;
  const last = tags.slice(-2 * TERMINAL.length);
  if (last.some((t, i) => t[0] !== `<${i % 2 ? "/" : ""}${TERMINAL[i >> 1]}>`)) return undefined;
  const end = (i: number) => last[i].index! + last[i][0].length;
  const between = [[1, 2], [3, 4], [5, 6]].map(([a, b]) => response.slice(end(a), last[b].index));
  if (between.some((gap) => gap.trim()) || response.slice(end(7)).trim()) return undefined;
  const confidence = confidenceOf(response.slice(end(6), last[7].index));
  if (confidence === undefined) return undefined;
  return { answer: response.slice(end(2), last[3].index), confidence };
}

/** RLCR's weighted format, accuracy and calibration components. */
export const rlcrReward: RewardFnFactory = {
  description: "RLCR: format, accuracy, Brier calibration and confidence terms, weighted",
  defaultArgs: {
    weights: {
      format: 0.5,
      accuracy: 0.5,
      brier: 0.5,
      mean_confidence: 1e-5,
      confidence_one_or_zero: 1e-5,
    },
  },
  compute({ response, task }, args) {
    const weights = args.weights as Record<string, number>;
    const q = lastConfidence(response);
    const chain = terminalChain(response);
    const accuracy = chain ? Number(mathCorrect(chain.answer, taskAnswer(task))) : 0;
    const parts: Record<string, number> = {
      format: chain ? 1 : 0,
      accuracy,
      brier: chain ? 1 - (accuracy - chain.confidence) ** 2 : 0,
      mean_confidence: q ?? 0,
      confidence_one_or_zero: q !== undefined && (q < 0.01 || q > 0.99) ? 1 : 0,
    };
    const metrics = Object.fromEntries(
      Object.entries(parts).map(([name, value]) => [name, weights[name] * value]),
    );
    return { reward: Object.values(metrics).reduce((a, b) => a + b, 0), metrics };
  },
};
