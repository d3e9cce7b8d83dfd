/**
 * The reward fn registry (Trinity's `REWARD_FUNCTIONS`) with the built-in fns registered
 * explicitly here; plugins add theirs with `REWARD_FUNCTIONS.register(name, factory)`.
 */

import { Registry } from "../../util/registry.ts";
import { countdownReward } from "./countdown.ts";
import { countdownTrinityReward } from "./countdown_reward.ts";
import { exactMatchReward } from "./exact_match.ts";
import { formatReward, formatTrinityReward } from "./format.ts";
import { mathReward } from "./math.ts";
import { mathBoxedReward } from "./math_boxed.ts";
import { mathDapoReward } from "./math_dapo.ts";
import { accuracyReward, mathTrinityReward } from "./math_reward.ts";
import { rlcrReward } from "./rlcr.ts";
import { rmGalleryReward } from "./rm_gallery.ts";
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
 * Reward fns by name: Trinity's (`accuracy_reward`, `countdown_reward`, `format_reward`,
 * `math_boxed_reward`, `math_dapo_reward`, `math_reward`, `rlcr_reward`, `rm_gallery_reward`)
 * and rft's (`countdown`, `exact_match`, `format`, `math`, `toolcall_reward`).
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
    ["countdown_reward", countdownTrinityReward],
    ["math_reward", mathTrinityReward],
    ["accuracy_reward", accuracyReward],
    ["format_reward", formatTrinityReward],
    ["rm_gallery_reward", rmGalleryReward],
    ["rlcr_reward", rlcrReward],
  ],
);
