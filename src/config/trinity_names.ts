/**
 * The names of Trinity-RFT's component registries: release v0.5.2's (its `default_mapping`s)
 * and those later releases added. Data only; what rft does with each is
 * `trinity_registry.ts`'s.
 */

/** Trinity's registries, by its own names. */
export type TrinityRegistry =
  | "algorithm_type"
  | "policy_loss_fn"
  | "advantage_fn"
  | "kl_fn"
  | "entropy_loss_fn"
  | "sample_strategy"
  | "experience_operator"
  | "task_selector"
  | "workflow"
  | "reward_fn";

/** The names of each registry in Trinity-RFT v0.5.2 (its `default_mapping`s). */
export const TRINITY_V052: Readonly<Record<TrinityRegistry, readonly string[]>> = {
  algorithm_type: [
    "sft",
    "ppo",
    "grpo",
    "reinforceplusplus",
    "rloo",
    "opmd",
    "asymre",
    "dpo",
    "topr",
    "cispo",
    "gspo",
    "sapo",
    "mix",
    "mix_chord",
    "raft",
    "sppo",
    "rec",
    "multi_step_grpo",
    "on_policy_distill",
    "jsd",
    "grpo_verl",
  ],
  policy_loss_fn: [
    "ppo",
    "opmd",
    "dpo",
    "sft",
    "mix",
    "gspo",
    "topr",
    "cispo",
    "sft_is",
    "sft_phi",
    "mix_chord",
    "sppo",
    "rec",
    "sapo",
    "importance_sampling",
  ],
  advantage_fn: [
    "ppo",
    "grpo",
    "grpo_verl",
    "step_wise_grpo",
    "reinforceplusplus",
    "reinforce",
    "remax",
    "rloo",
    "opmd",
    "opmd_verl",
    "asymre",
    "asymre_verl",
    "rec",
    "on_policy_distill",
    "jsd",
    "clipb",
    "clipv",
  ],
  kl_fn: ["none", "k1", "k2", "k3", "low_var_kl", "abs", "corrected_k3"],
  entropy_loss_fn: ["default", "mix", "none"],
  sample_strategy: ["default", "warmup", "staleness_control", "mix"],
  experience_operator: [
    "reward_filter",
    "reward_std_filter",
    "reward_shaping_mapper",
    "pass_rate_calculator",
    "data_juicer",
    "invalid_reward_filter",
  ],
  task_selector: ["sequential", "shuffle", "random", "offline_easy2hard", "difficulty_based"],
  workflow: [
    "simple_workflow",
    "async_simple_workflow",
    "math_workflow",
    "async_math_workflow",
    "math_boxed_workflow",
    "async_math_boxed_workflow",
    "math_eval_workflow",
    "async_math_eval_workflow",
    "math_rm_workflow",
    "async_math_rm_workflow",
    "tool_call_workflow",
    "agentscope_workflow_adapter",
    "agentscope_workflow_adapter_v1",
    "agentscope_react_workflow",
    "agentscope_react_math_workflow",
    "as_react_workflow",
    "agentscopev0_react_math_workflow",
    "agentscope_v1_react_search_workflow",
    "email_search_workflow",
    "alfworld_workflow",
    "RAFT_alfworld_workflow",
    "RAFT_reflect_alfworld_workflow",
    "frozen_lake_workflow",
    "sciworld_workflow",
    "webshop_workflow",
    "step_wise_alfworld_workflow",
    "async_math_ruler_workflow",
    "math_ruler_workflow",
    "math_trainable_ruler_workflow",
    "rubric_judge_workflow",
    "rubric_judge_openai_workflow",
    "simple_mm_workflow",
    "async_simple_mm_workflow",
    "on_policy_distill_workflow",
    "on_policy_distill_math_workflow",
    "sudoku_workflow",
  ],
  reward_fn: [
    "rm_gallery_reward",
    "math_reward",
    "math_boxed_reward",
    "format_reward",
    "countdown_reward",
    "accuracy_reward",
    "math_dapo_reward",
  ],
};

/** Names later Trinity releases added (rft's coverage of them is best effort). */
export const TRINITY_LATER: Readonly<Partial<Record<TrinityRegistry, readonly string[]>>> = {
  algorithm_type: ["cpt", "m2po", "dapo", "gigpo"],
  policy_loss_fn: ["m2po"],
  advantage_fn: ["gigpo", "cod"],
  experience_operator: [
    "dapo_dynamic_sampling",
    "mask_response_truncated",
    "cod_advantage_fn",
    "cod_overwrite_reward_with_returns",
  ],
  workflow: ["toolcall_workflow", "intercode_sql_workflow", "thinking_budget_workflow"],
  reward_fn: [
    "rlcr_reward",
    "openjudge_reward",
    "trajectory_accuracy_grader_reward",
    "openjudge_trajectory_accuracy_reward",
    "openjudge_multi_grader_reward",
  ],
};

/** Whether `name` is a component of Trinity's registry `registry` (any release known here). */
export function isTrinityName(registry: TrinityRegistry, name: string): boolean {
  return TRINITY_V052[registry].includes(name) || !!TRINITY_LATER[registry]?.includes(name);
}
