/**
 * `format` and Trinity's `format_reward`: reward a response whose text matches a required
 * format, by default `<think>...</think><answer>...</answer>` (the R1 / TinyZero shape). They
 * check the shape only, never the answer: combine with a verifiable fn for that. `format`
 * tests the trimmed response (1 / 0); `format_reward` is Trinity's `FormatReward`: the pattern
 * (its default asks for each tag on its own line) matched from the response's start, `^` and
 * `$` at line ends (Python's `re.match` with MULTILINE), 0.1 / -0.1.
 */

import type { Args } from "../../util/registry.ts";
import type { RewardFnFactory } from "./reward_fn.ts";

/** The default `pattern` of `format`: a think block, then an answer block, nothing around. */
export const THINK_ANSWER_PATTERN = "^<think>.*?</think>\\s*<answer>.*?</answer>$";

/** Trinity's default `pattern` of `format_reward`. */
export const TRINITY_FORMAT_PATTERN = "^<think>\\n.*?\\n</think>\\n<answer>\\n.*?\\n</answer>$";

/**
 * Reward `correct_reward` or `wrong_reward` by whether `text` matches `args.pattern`; metric
 * `format_score`: 1 / 0 (`indicator`), else the reward.
 */
function scoreFormat(text: string, args: Args, flags: string, indicator: boolean) {
  const matches = new RegExp(args.pattern as string, flags).test(text);
  const reward = (matches ? args.correct_reward : args.wrong_reward) as number;
  return { reward, metrics: { format_score: indicator ? Number(matches) : reward } };
}

/**
 * Reward `correct_reward` (1) when the trimmed response matches `pattern` (a JavaScript regular
 * expression; `.` also matches newlines), else `wrong_reward` (0); metric `format_score`.
 */
export const formatReward: RewardFnFactory = {
  description: "response matches a required format (regular expression)",
  defaultArgs: { pattern: THINK_ANSWER_PATTERN, correct_reward: 1, wrong_reward: 0 },
  compute: ({ response }, args) => scoreFormat(response.trim(), args, "s", true),
};

/** Trinity's `format_reward`: 0.1 when the response matches from its start, else -0.1. */
export const formatTrinityReward: RewardFnFactory = {
  description: "response matches a format from its start: +0.1, else -0.1 (Trinity's)",
  defaultArgs: { pattern: TRINITY_FORMAT_PATTERN, correct_reward: 0.1, wrong_reward: -0.1 },
  compute: ({ response }, args) => scoreFormat(response, args, "msy", false),
};
