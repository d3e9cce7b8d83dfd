/**
 * `countdown`: TinyZero's countdown score. The row holds `target` and `nums`; the response's
 * equation (the last `<answer>...</answer>`) must use every number of `nums` exactly once and
 * evaluate to `target` (within 1e-5). Evaluated by `expression.ts`, never `eval`. Unlike
 * TinyZero, an answer that does not parse as arithmetic scores 0, not the format score.
 */

import type { Task } from "../../buffer/task.ts";
import { evaluateArithmetic } from "./expression.ts";
import type { RewardFnFactory } from "./reward_fn.ts";

/** A countdown puzzle: reach `target` from `nums`. */
export interface CountdownRow {
  target: number;
  nums: number[];
}

/** How far from the target an equation's value may be. */
const TOLERANCE = 1e-5;

/** The puzzle of `task`'s row; throws naming the task when `target` or `nums` is malformed. */
export function countdownRow(task: Pick<Task, "taskId" | "rawTask">): CountdownRow {
  const { target, nums } = task.rawTask;
  const bad = (key: string, value: unknown, expected: string) =>
    new Error(
      `Task "${task.taskId}" has "${key}" = ${JSON.stringify(value)}; expected ${expected}`,
    );
  if (!Number.isFinite(target)) throw bad("target", target, "a number");
  if (!Array.isArray(nums) || nums.length === 0 || !nums.every(isNonNegativeInteger)) {
    throw bad("nums", nums, "a non-empty array of non-negative integers");
  }
  return { target: target as number, nums };
}

/**
 * Reward `correct_reward` (1) for an equation that uses each number once and hits the target,
 * `format_score` (0.1) for a well-formed equation that does not, 0 without one; metrics
 * `accuracy` and `format_score` (1 when the equation is well-formed).
 */
export const countdownReward: RewardFnFactory = {
  description: "countdown: <answer> equation uses each number once and equals the target",
  defaultArgs: { correct_reward: 1, format_score: 0.1 },
  compute({ response, task }, args) {
    const { target, nums } = countdownRow(task);
    const equation = [...response.matchAll(/<answer>(.*?)<\/answer>/gs)].at(-1)?.[1];
    const result = equation === undefined ? undefined : evaluateArithmetic(equation);
    if (result === undefined) return { reward: 0, metrics: { accuracy: 0, format_score: 0 } };
    const sorted = (values: number[]) => [...values].sort((a, b) => a - b).join(",");
    const correct = sorted(result.numbers) === sorted(nums) &&
      Math.abs(result.value - target) < TOLERANCE;
    return {
      reward: (correct ? args.correct_reward : args.format_score) as number,
      metrics: { accuracy: Number(correct), format_score: 1 },
    };
  },
};

function isNonNegativeInteger(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 0;
}
