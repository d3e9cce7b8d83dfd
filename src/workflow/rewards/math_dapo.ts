/**
 * `math_dapo_reward` (Trinity's `MathDAPORewardFn`; DAPO, arXiv:2503.14476): +1 when the final
 * answer after the last `</think>` (its `\boxed{}`, else its `Answer: ...` line, the form DAPO's
 * prompt asks for) equals the reference's answer, else -1; plus, with `enable_overlong_penalty`,
 * DAPO's soft overlong punishment (section 3.4) on the response's token count. Differs from
 * Trinity: metric `accuracy` is 0 / 1 (Trinity logs -1 / 1), so eval accuracy reads as a rate.
 */

import type { Args } from "../../algorithm/registry.ts";
import { taskAnswer } from "../../buffer/task.ts";
import { answersEqual, markedAnswer, referenceAnswer } from "./math_answer.ts";
import type { RewardFnFactory } from "./reward_fn.ts";

/**
 * DAPO's overlong penalty of a response `length` tokens long: 0 up to
 * `max_response_length - cache_length`, then falling linearly to `-penalty_factor` at
 * `max_response_length`, and `-penalty_factor` beyond.
 */
export function overlongPenalty(length: number, args: Args): number {
  const [max, cache, factor] = [
    args.max_response_length,
    args.cache_length,
    args.penalty_factor,
  ] as number[];
  const expected = max - cache;
  if (length <= expected) return 0;
  if (length > max) return -factor;
  return (expected - length) / cache * factor;
}

/** Reward `±1 + format_score`; metrics `accuracy` (0 / 1) and `format_score` (the penalty). */
export const mathDapoReward: RewardFnFactory = {
  description: "DAPO: +1 / -1 on the final answer (\\boxed{} or 'Answer:'), overlong penalty",
  defaultArgs: {
    enable_overlong_penalty: false,
    penalty_factor: null,
    max_response_length: null,
    cache_length: null,
  },
  checkArgs(args) {
    if (!args.enable_overlong_penalty) return;
    for (const key of ["penalty_factor", "max_response_length", "cache_length"]) {
      if (typeof args[key] !== "number") {
        throw new Error(
          `Cannot configure reward fn "math_dapo_reward": key "${key}" expected a number when enable_overlong_penalty is true, received ${
            args[key]
          }`,
        );
      }
    }
    if (!((args.max_response_length as number) > (args.cache_length as number))) {
      throw new Error(
        `Cannot configure reward fn "math_dapo_reward": key "max_response_length" expected a number > cache_length (${args.cache_length}), received ${args.max_response_length}`,
      );
    }
  },
  compute({ response, task, responseLength }, args) {
    const thought = response.lastIndexOf("</think>");
    const answer = markedAnswer(thought < 0 ? response : response.slice(thought + 8));
    const correct = answer !== undefined &&
      answersEqual(answer, referenceAnswer(taskAnswer(task)));
    let formatScore = 0;
    if (args.enable_overlong_penalty) {
      if (responseLength === undefined) {
        throw new Error("the overlong penalty needs the response's token count; none was given");
      }
      formatScore = overlongPenalty(responseLength, args);
    }
    return {
      reward: (correct ? 1 : -1) + formatScore,
      metrics: { accuracy: Number(correct), format_score: formatScore },
    };
  },
};
