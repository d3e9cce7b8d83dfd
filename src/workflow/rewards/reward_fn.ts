/**
 * The reward fn contract (Trinity's `RewardFn`, TRL's reward functions): score one response to a
 * task, with numbers to log, and `computeReward`, the one call site that runs a configured fn
 * and turns its failure into an error naming the task. Holds no reward fn (see the files beside
 * it) and no registry (`mod.ts`).
 */

import type { Args, Configurable, Configured } from "../../algorithm/registry.ts";
import type { Task } from "../../buffer/task.ts";

/** What a reward fn scores: one response text and the task it answers. */
export interface RewardInput {
  /** The response as text (no final stop token). */
  response: string;
  task: Task;
}

/** A reward and its metrics; verifiable fns set `metrics.accuracy` to 0 or 1. */
export interface RewardResult {
  reward: number;
  /** Numbers for logging (e.g. `accuracy`, `format_score`); eval accuracy reads `accuracy`. */
  metrics: Record<string, number>;
}

/** A registry entry: default arguments (YAML `reward_fn_args`) and the scoring function. */
export interface RewardFnFactory extends Configurable {
  /** One line for listings. */
  readonly description: string;
  /** Scores `input` with `args` (already checked against `defaultArgs`); throws on a bad row. */
  compute(input: RewardInput, args: Args): RewardResult;
}

/** A reward fn looked up by name with its arguments resolved (see `configure`). */
export type ConfiguredRewardFn = Configured<RewardFnFactory>;

/**
 * Runs `rewardFn` on `response` to `task`. Throws naming the task and the fn when it throws or
 * returns a reward that is not a finite number.
 *
 * @example
 * ```ts
 * const fn = configure(REWARD_FUNCTIONS, "math");
 * const { reward, metrics } = computeReward(fn, task, "so \\boxed{4}");
 * ```
 */
export function computeReward(
  rewardFn: ConfiguredRewardFn,
  task: Task,
  response: string,
): RewardResult {
  const where = `Cannot score task "${task.taskId}" with reward fn "${rewardFn.name}"`;
  let result: RewardResult;
  try {
    result = rewardFn.entry.compute({ response, task }, rewardFn.args);
  } catch (err) {
    throw new Error(`${where}: ${(err as Error).message}`, { cause: err });
  }
  if (!Number.isFinite(result?.reward)) {
    throw new Error(`${where}: it returned reward ${result?.reward}; expected a finite number`);
  }
  return result;
}
