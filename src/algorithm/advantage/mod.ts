/**
 * The advantage fn registry (Trinity's `ADVANTAGE_FN`) with the built-in fns registered
 * explicitly here; plugins add theirs with `ADVANTAGE_FN.register(name, fn)`.
 */

import { Registry } from "../../util/registry.ts";
import type { AdvantageFn } from "./advantage_fn.ts";
import { grpoAdvantage } from "./grpo.ts";
import { opmdAdvantage } from "./opmd.ts";
import { ppoAdvantage } from "./ppo.ts";
import { reinforceAdvantage } from "./reinforce.ts";
import { reinforcePlusPlusAdvantage } from "./reinforce_plus_plus.ts";
import { rlooAdvantage } from "./rloo.ts";

export {
  type AdvantageFn,
  type Advantages,
  type AdvantageSample,
  klPenalizedRewards,
} from "./advantage_fn.ts";

/** Advantage fns by name: `grpo`, `opmd`, `ppo`, `reinforce`, `reinforceplusplus`, `rloo`. */
export const ADVANTAGE_FN: Registry<AdvantageFn> = new Registry<AdvantageFn>("advantage fn", [
  ["grpo", grpoAdvantage],
  ["rloo", rlooAdvantage],
  ["reinforce", reinforceAdvantage],
  ["reinforceplusplus", reinforcePlusPlusAdvantage],
  ["opmd", opmdAdvantage],
  ["ppo", ppoAdvantage],
]);
