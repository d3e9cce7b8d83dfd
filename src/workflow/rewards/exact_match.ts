/**
 * `exact_match`: the response, trimmed, equals the task's reference answer (`taskAnswer`),
 * trimmed. No answer extraction or normalization beyond case (see `math.ts` for that).
 */

import { taskAnswer } from "../../buffer/task.ts";
import type { RewardFnFactory } from "./reward_fn.ts";

/** Reward `correct_reward` (1) on a match, else `wrong_reward` (0); metric `accuracy`. */
export const exactMatchReward: RewardFnFactory = {
  description: "trimmed response equals the reference answer",
  defaultArgs: { case_sensitive: true, correct_reward: 1, wrong_reward: 0 },
  compute({ response, task }, args) {
    const fold = (s: string) => args.case_sensitive ? s.trim() : s.trim().toLowerCase();
    const correct = fold(response) === fold(taskAnswer(task));
    return {
      reward: (correct ? args.correct_reward : args.wrong_reward) as number,
      metrics: { accuracy: Number(correct) },
    };
  },
};
