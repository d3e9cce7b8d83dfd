/**
 * The reward fn registry (Trinity's `REWARD_FUNCTIONS`) with the built-in fns registered
 * explicitly here; plugins add theirs with `REWARD_FUNCTIONS.register(name, factory)`.
 */

import { Registry } from "../../util/registry.ts";
import { countdownReward } from "./countdown.ts";
import { exactMatchReward } from "./exact_match.ts";
import { formatReward } from "./format.ts";
import { mathReward } from "./math.ts";
import { mathBoxedReward } from "./math_boxed.ts";
import { mathDapoReward } from "./math_dapo.ts";
import type { RewardFnFactory } from "./reward_fn.ts";
import { toolcallReward } from "./toolcall.ts";

export {
  computeReward,
  type ConfiguredRewardFn,
  type RewardFnFactory,
  type RewardInput,
  type RewardResult,
} from "./reward_fn.ts";

/**
 * Reward fns by name: `countdown`, `exact_match`, `format`, `math`, `math_boxed_reward`,
 * `math_dapo_reward`, `toolcall_reward`.
 */
export const REWARD_FUNCTIONS: Registry<RewardFnFactory> = new Registry<RewardFnFactory>(
  "reward fn",
  [
    ["exact_match", exactMatchReward],
    ["math", mathReward],
    ["math_boxed_reward", mathBoxedReward],
    ["math_dapo_reward", mathDapoReward],
    ["format", formatReward],
    ["countdown", countdownReward],
    ["toolcall_reward", toolcallReward],
  ],
);
