/**
 * `countdown_reward` (Trinity's `CountDownRewardFn`, after TinyZero): the task's reference
 * answer (`response_key`) holds the puzzle as JSON, `{"numbers": [...], "target": N}`; the
 * response's equation is the last `<answer>...</answer>` of its last line. Reward 1 when the
 * equation uses each number exactly once and evaluates to the target (within 1e-5), 0.1 for an
 * equation that does not, 0 without one. Evaluated by `expression.ts`, never `eval`. Metrics
 * `score` (Trinity's) and `accuracy`.
 */

import { taskAnswer } from "../../buffer/task.ts";
import { InputError } from "../../util/input_error.ts";
import { evaluateArithmetic } from "./expression.ts";
import type { RewardFnFactory } from "./reward_fn.ts";

/** The puzzle of a task's reference answer; throws naming what is wrong. */
function puzzle(answer: string): { numbers: number[]; target: number } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer);
  } catch {
    parsed = undefined;
  }
  const { numbers, target } = (parsed ?? {}) as Record<string, unknown>;
  if (!Array.isArray(numbers) || !numbers.every(Number.isFinite) || !Number.isFinite(target)) {
    throw new InputError(
      `expected the reference answer to be JSON {"numbers": [...], "target": N}, found ${
        JSON.stringify(answer.slice(0, 60))
      }`,
    );
  }
  return { numbers: numbers as number[], target: target as number };
}

/** Score 1 / 0.1 / 0 as TinyZero's countdown. */
export const countdownTrinityReward: RewardFnFactory = {
  description: "countdown: JSON puzzle in the reference; <answer> equation of the last line",
  defaultArgs: {},
  compute({ response, task }) {
    const { numbers, target } = puzzle(taskAnswer(task));
    const lastLine = response.split("\n").at(-1)!;
    const equation = [...lastLine.matchAll(/<answer>(.*?)<\/answer>/g)].at(-1)?.[1].trim();
    if (equation === undefined) return { reward: 0, metrics: { score: 0, accuracy: 0 } };
    const used = (equation.match(/\d+/g) ?? []).map(Number).sort((a, b) => a - b);
    const available = [...numbers].sort((a, b) => a - b);
    const value = /^[\d+\-*/().\s]+$/.test(equation) ? evaluateArithmetic(equation) : undefined;
    const correct = used.join(",") === available.join(",") && value !== undefined &&
      Math.abs(value.value - target) < 1e-5;
    const score = correct ? 1 : 0.1;
    return { reward: score, metrics: { score, accuracy: Number(correct) } };
  },
};
