/**
 * Trinity's `math_reward` (`MathRewardFn`) and `accuracy_reward` (`AccuracyReward`).
 * `accuracy_reward`: 1 when the response's final answer (`math_answer.ts`: `<answer>`,
 * `\boxed{}`, `####`, the last number) equals the reference's (as numbers or LaTeX values, else
 * as normalized text; rft's verifier in place of Python's math_verify), else 0; metric
 * `accuracy`. `math_reward`: that accuracy (on the `<answer>` block when there is one) plus a
 * format score of +0.1 when the response ends with `<think>...</think> <answer>...</answer>`,
 * else -0.1; the reward is their sum, as in Trinity.
 */

import { taskAnswer } from "../../buffer/task.ts";
import { mathCorrect } from "./math.ts";
import type { RewardFnFactory } from "./reward_fn.ts";

/** Trinity's default format pattern of `math_reward`. */
export const MATH_FORMAT_PATTERN = "^.*?<think>.*?</think>\\s*<answer>.*?</answer>\\s*$";

/** Accuracy of a final answer against the reference. */
export const accuracyReward: RewardFnFactory = {
  description: "final answer equals the reference's (math verifier), metric accuracy",
  defaultArgs: {},
  compute({ response, task }) {
    const accuracy = Number(mathCorrect(response, taskAnswer(task)));
    return { reward: accuracy, metrics: { accuracy } };
  },
};

/** Accuracy plus a +-0.1 think/answer format score. */
export const mathTrinityReward: RewardFnFactory = {
  description: "accuracy plus +-0.1 for the <think>/<answer> format (Trinity's math_reward)",
  defaultArgs: { pattern: MATH_FORMAT_PATTERN },
  compute({ response, task }, args) {
    const accuracy = Number(mathCorrect(response, taskAnswer(task)));
    const formatScore = new RegExp(args.pattern as string, "msy").test(response) ? 0.1 : -0.1;
    return {
      reward: accuracy + formatScore,
      metrics: { accuracy, format_score: formatScore },
    };
  },
};
