/**
 * The reward fn contract (Trinity's `RewardFn`, TRL's reward functions): score one response to a
 * task, with numbers to log, and `computeReward`, the one call site that runs a configured fn
 * and turns its failure into an error naming the task. Holds no reward fn (see the files beside
 * it) and no registry (`mod.ts`).
 */

import type { Args, Configurable, Configured } from "../../util/registry.ts";
import { AuxiliaryModels } from "../../auxiliary/auxiliary_models.ts";
import type { Task } from "../../buffer/task.ts";

/** What a reward fn scores: one response text and the task it answers. */
export interface RewardInput {
  /** The response as text (no final stop token). */
  response: string;
  task: Task;
  /**
   * The run's auxiliary models (`explorer.auxiliary_models`), e.g.
   * `await auxiliaryModels.onnx("scorer").score([features])`; empty when none are configured.
   */
  auxiliaryModels: AuxiliaryModels;
  /** How many tokens the response has (its stop token included); absent when unknown. */
  responseLength?: number;
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
  /**
   * Scores `input` with `args` (already checked against `defaultArgs`); throws on a bad row.
   * May be async, e.g. to call an auxiliary model.
   */
  compute(input: RewardInput, args: Args): RewardResult | Promise<RewardResult>;
  /** Checks `args` across keys (beyond their types) before any use; throws naming the key. */
  checkArgs?(args: Args): void;
}

/**
 * A reward fn looked up by name with its arguments resolved (see `configure`), and the
 * auxiliary models its calls get (absent: none).
 */
export type ConfiguredRewardFn = Configured<RewardFnFactory> & {
  auxiliaryModels?: AuxiliaryModels;
};

/** The input of reward fns that have no auxiliary models. */
const NO_AUXILIARY_MODELS = new AuxiliaryModels();

/**
 * Runs `rewardFn` on `response` to `task` (`responseLength` tokens long, when known). Rejects
 * naming the task and the fn when it throws or returns a reward that is not a finite number.
 *
 * @example
 * ```ts
 * import type { Task } from "../../buffer/task.ts";
 * import { configure } from "../../util/registry.ts";
 * import { REWARD_FUNCTIONS } from "./mod.ts";
 * const task: Task = {
 *   taskId: "0.0",
 *   index: 0,
 *   epoch: 0,
 *   workflow: "math_workflow",
 *   rawTask: { question: "2 + 2 = ?", answer: "4" },
 *   formatArgs: { promptKey: "question", responseKey: "answer" },
 *   rolloutArgs: { n: 1 },
 *   workflowArgs: {},
 *   isEval: false,
 * };
 * const fn = configure(REWARD_FUNCTIONS, "math");
 * const { reward, metrics } = await computeReward(fn, task, "so \\boxed{4}"); // 1, { accuracy: 1 }
 * ```
 */
export async function computeReward(
  rewardFn: ConfiguredRewardFn,
  task: Task,
  response: string,
  responseLength?: number,
): Promise<RewardResult> {
  const where = `Cannot score task "${task.taskId}" with reward fn "${rewardFn.name}"`;
  const auxiliaryModels = rewardFn.auxiliaryModels ?? NO_AUXILIARY_MODELS;
  let result: RewardResult;
  try {
    const input = { response, task, auxiliaryModels, responseLength };
    result = await rewardFn.entry.compute(input, rewardFn.args);
  } catch (err) {
    throw new Error(`${where}: ${(err as Error).message}`, { cause: err });
  }
  if (!Number.isFinite(result?.reward)) {
    throw new Error(`${where}: it returned reward ${result?.reward}; expected a finite number`);
  }
  return result;
}
