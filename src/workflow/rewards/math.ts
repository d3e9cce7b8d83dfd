/**
 * `math`: the final answer of a response (`math_answer.ts`: `<answer>`, `\boxed{}`, `#### N`,
 * `The answer is N`, else the last number) against the answer of the task's reference field
 * (GSM8K's `...reasoning... #### 10` gives `10`), equal as numbers or LaTeX values, else as
 * normalized text. Unlike Trinity's `math_reward`, adds no format score.
 */

import { taskAnswer } from "../../buffer/task.ts";
import { answersEqual, extractAnswer, referenceAnswer } from "./math_answer.ts";
import type { RewardFnFactory } from "./reward_fn.ts";

/** Whether `response`'s final answer equals the answer of `reference`. */
export function mathCorrect(response: string, reference: string): boolean {
  const answer = extractAnswer(response);
  return answer !== undefined && answersEqual(answer, referenceAnswer(reference));
}

/**
 * Reward `correct_reward` (1) when the extracted answer equals the reference's, else
 * `wrong_reward` (0, also when no answer is found); metric `accuracy`.
 */
export const mathReward: RewardFnFactory = {
  description: "final answer (<answer>, \\boxed{}, ####, last number) equals the reference's",
  defaultArgs: { correct_reward: 1, wrong_reward: 0 },
  compute({ response, task }, args) {
    const correct = mathCorrect(response, taskAnswer(task));
    return {
      reward: (correct ? args.correct_reward : args.wrong_reward) as number,
      metrics: { accuracy: Number(correct) },
    };
  },
};
