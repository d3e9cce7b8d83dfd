/**
 * `format`: rewards a response whose trimmed text matches a required format, by default
 * `<think>...</think><answer>...</answer>` (the R1 / TinyZero shape). Checks the shape only,
 * never the answer: combine with a verifiable fn for that.
 */

import type { RewardFnFactory } from "./reward_fn.ts";

/** The default `pattern`: a think block, then an answer block, nothing around them. */
export const THINK_ANSWER_PATTERN = "^<think>.*?</think>\\s*<answer>.*?</answer>$";

/**
 * Reward `correct_reward` (1) when the trimmed response matches `pattern` (a JavaScript regular
 * expression; `.` also matches newlines), else `wrong_reward` (0); metric `format_score`.
 */
export const formatReward: RewardFnFactory = {
  description: "response matches a required format (regular expression)",
  defaultArgs: { pattern: THINK_ANSWER_PATTERN, correct_reward: 1, wrong_reward: 0 },
  compute({ response }, args) {
    const matches = new RegExp(args.pattern as string, "s").test(response.trim());
    return {
      reward: (matches ? args.correct_reward : args.wrong_reward) as number,
      metrics: { format_score: Number(matches) },
    };
  },
};
