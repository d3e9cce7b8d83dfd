/**
 * The advantage fn registry (Trinity's `ADVANTAGE_FN`) with the built-in fns registered
 * explicitly here; plugins add theirs with `ADVANTAGE_FN.register(name, fn)`.
 */

import { Registry } from "../../util/registry.ts";
import type { AdvantageFn } from "./advantage_fn.ts";
import { asymreAdvantage, asymreVerlAdvantage } from "./asymre.ts";
import { jsdAdvantage, onPolicyDistillAdvantage } from "./distill.ts";
import { clipbAdvantage, clipvAdvantage } from "./entropy_clip.ts";
import { grpoAdvantage, grpoVerlAdvantage } from "./grpo.ts";
import { opmdAdvantage, opmdVerlAdvantage } from "./opmd.ts";
import { ppoAdvantage } from "./ppo.ts";
import { reinforceAdvantage } from "./reinforce.ts";
import { reinforcePlusPlusAdvantage } from "./reinforce_plus_plus.ts";
import { recAdvantage } from "./rec.ts";
import { rlooAdvantage } from "./rloo.ts";
import { stepWiseGrpoAdvantage } from "./step_wise_grpo.ts";

export {
  type AdvantageFn,
  type AdvantageInput,
  type Advantages,
  type AdvantageSample,
  klPenalizedRewards,
} from "./advantage_fn.ts";

/**
 * Advantage fns by name (Trinity's registry but `remax`): `asymre`, `asymre_verl`, `clipb`,
 * `clipv`, `grpo`, `grpo_verl`, `jsd`, `on_policy_distill`, `opmd`, `opmd_verl`, `ppo`, `rec`,
 * `reinforce`, `reinforceplusplus`, `rloo`, `step_wise_grpo`.
 */
export const ADVANTAGE_FN: Registry<AdvantageFn> = new Registry<AdvantageFn>("advantage fn", [
  ["grpo", grpoAdvantage],
  ["rloo", rlooAdvantage],
  ["reinforce", reinforceAdvantage],
  ["reinforceplusplus", reinforcePlusPlusAdvantage],
  ["opmd", opmdAdvantage],
  ["ppo", ppoAdvantage],
  ["grpo_verl", grpoVerlAdvantage],
  ["opmd_verl", opmdVerlAdvantage],
  ["asymre", asymreAdvantage],
  ["asymre_verl", asymreVerlAdvantage],
  ["rec", recAdvantage],
  ["step_wise_grpo", stepWiseGrpoAdvantage],
  ["on_policy_distill", onPolicyDistillAdvantage],
  ["jsd", jsdAdvantage],
  ["clipb", clipbAdvantage],
  ["clipv", clipvAdvantage],
]);
