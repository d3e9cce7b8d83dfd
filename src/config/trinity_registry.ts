/**
 * Every name of Trinity-RFT's component registries (release v0.5.2, and the names later
 * releases added), and what rft does with each: `implemented` (rft's registry of that kind has
 * the name; the one-line note says how it differs from Trinity's, when it does), `refused` (it
 * needs a system outside rft, named), or `missing` (with the reason). Data and a status lookup
 * only: docs/config.md's table and the coverage test read it.
 */

import { ADVANTAGE_FN } from "../algorithm/advantage/mod.ts";
import { ALGORITHM_TYPE } from "../algorithm/algorithm_type.ts";
import { ENTROPY_LOSS_FN } from "../algorithm/entropy.ts";
import { KL_FN } from "../algorithm/kl.ts";
import { POLICY_LOSS_FN } from "../algorithm/policy_loss/mod.ts";
import { SAMPLE_STRATEGY } from "../algorithm/sample_strategy.ts";
import { EXPERIENCE_OPERATORS } from "../buffer/operators/mod.ts";
import { TASK_SELECTORS } from "../buffer/selectors/mod.ts";
import { REWARD_FUNCTIONS, WORKFLOWS } from "../workflow/mod.ts";
import { COD, OUTSIDE_OPERATORS, OUTSIDE_REWARDS, OUTSIDE_WORKFLOWS } from "./trinity_outside.ts";
import type { TrinityRegistry } from "./trinity_names.ts";

/** rft's registry of each kind (what `has` answers for it). */
const RFT: Readonly<Record<TrinityRegistry, { has(name: string): boolean }>> = {
  algorithm_type: ALGORITHM_TYPE,
  policy_loss_fn: POLICY_LOSS_FN,
  advantage_fn: ADVANTAGE_FN,
  kl_fn: KL_FN,
  entropy_loss_fn: ENTROPY_LOSS_FN,
  sample_strategy: SAMPLE_STRATEGY,
  experience_operator: EXPERIENCE_OPERATORS,
  task_selector: TASK_SELECTORS,
  workflow: WORKFLOWS,
  reward_fn: REWARD_FUNCTIONS,
};

const GIGPO = "GiGPO's step-level groups are the steps of different rollouts that saw the " +
  "same environment state (ALFWorld's, in Trinity's examples); rft has not built it";

/** Names rft lacks on purpose, by registry, and why (beside the outside systems). */
const MISSING: Readonly<Partial<Record<TrinityRegistry, Readonly<Record<string, string>>>>> = {
  algorithm_type: {
    gigpo: GIGPO,
    cpt: "continued pre-training (after v0.5.2): for plain text, rft's sft on a dataset of " +
      "single-turn messages does the same training",
  },
  advantage_fn: {
    remax: "needs each prompt's greedy-rollout reward (reward_baselines), which neither " +
      "Trinity's workflows nor rft's produce",
    gigpo: GIGPO,
  },
  workflow: {
    thinking_budget_workflow: "needs vLLM's thinking-token budget (the end of reasoning " +
      "forced mid-generation), which rft's sampler does not have",
  },
};

/** How a Trinity component differs in rft, where it does. */
const NOTES: Readonly<Partial<Record<TrinityRegistry, Readonly<Record<string, string>>>>> = {
  advantage_fn: {
    grpo: "a group of one gets advantage 0 (Trinity: reward / (1 + eps))",
    opmd: "a group of one gets advantage 0 (Trinity: baseline 0)",
    clipb: "entropies and log-probs from the trainer's pass before the step",
    clipv: "entropies, log-probs and nec from the trainer's pass before the step",
  },
  policy_loss_fn: {
    mix: "each part aggregated over its own rows; micro-batches weighed by rows",
    mix_chord: "each part aggregated over its own rows; micro-batches weighed by rows",
    sft: "`use_token_level_loss` is spelled `loss_agg_mode`",
  },
  kl_fn: { none: "no adaptive KL controller for any KL fn (adaptive is accepted, not applied)" },
  sample_strategy: { warmup: "the same as default (deprecated in Trinity)" },
  workflow: {
    frozen_lake_workflow: "maps from rft's seeded generator (not Gymnasium's numpy maps)",
    sudoku_workflow: "boards from rft's seeded generator when the row gives none",
    math_workflow: "rft's math reward by default (no +-0.1 format score) and a \\boxed{} prompt",
  },
  reward_fn: {
    rm_gallery_reward: "math_verify_reward on rft's verifier; other reward models refused",
    accuracy_reward: "rft's math verifier in place of math_verify",
    math_reward: "rft's math verifier in place of math_verify",
  },
};

/** The outside-system table of `registry` (a function: `trinity_outside.ts` imports this). */
function outsideTable(registry: TrinityRegistry): Readonly<Record<string, string>> {
  if (registry === "workflow") return OUTSIDE_WORKFLOWS;
  if (registry === "advantage_fn") return { cod: COD };
  if (registry === "reward_fn") return OUTSIDE_REWARDS;
  return registry === "experience_operator" ? OUTSIDE_OPERATORS : {};
}

/** What rft does with Trinity's component `name` of `registry`. */
export interface TrinityComponentStatus {
  status: "implemented" | "refused" | "missing";
  note: string;
}

/** The status of Trinity's `name` in `registry`. */
export function trinityComponentStatus(
  registry: TrinityRegistry,
  name: string,
): TrinityComponentStatus {
  if (RFT[registry].has(name)) {
    return { status: "implemented", note: NOTES[registry]?.[name] ?? "" };
  }
  const outside = outsideTable(registry)[name];
  if (outside) return { status: "refused", note: `needs ${outside}` };
  return { status: "missing", note: MISSING[registry]?.[name] ?? "not built" };
}
