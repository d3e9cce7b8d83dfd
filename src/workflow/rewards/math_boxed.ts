/**
 * `math_boxed_reward` (Trinity's `MathBoxedRewardFn`, the default of `math_boxed_workflow`):
 * accuracy 1 when the response's last `\boxed{}` equals the reference's answer, else 0 (an
 * unboxed answer counts as none); with `with_think`, a format score of `-format_score_coef`
 * when the response lacks exactly one `<think>` before one `</think>`. Reward: their sum.
 */

import { taskAnswer } from "../../buffer/task.ts";
import { answersEqual, lastBoxed, referenceAnswer } from "./math_answer.ts";
import type { RewardFnFactory } from "./reward_fn.ts";

/** Whether `text` holds exactly one `<think>` and one `</think>`, in that order. */
export function hasThinkBlock(text: string): boolean {
  const opens = text.split("<think>").length - 1;
  const closes = text.split("</think>").length - 1;
  return opens === 1 && closes === 1 && text.indexOf("<think>") < text.indexOf("</think>");
}

/** Metrics `accuracy` (0 or 1) and `format_score` (0 or `-format_score_coef`). */
export const mathBoxedReward: RewardFnFactory = {
  description: "last \\boxed{} equals the reference's answer; optional <think> format penalty",
  defaultArgs: { with_think: false, format_score_coef: 0.1 },
  compute({ response, task }, args) {
    const answer = lastBoxed(response);
    const accuracy = Number(
      answer !== undefined && answersEqual(answer, referenceAnswer(taskAnswer(task))),
    );
    const formatScore = args.with_think && !hasThinkBlock(response)
      ? -(args.format_score_coef as number)
      : 0;
    return { reward: accuracy + formatScore, metrics: { accuracy, format_score: formatScore } };
  },
};
