/**
 * What `./rft run` does with each Trinity-RFT example config of tests/trinity/configs (run from
 * a Trinity-like tree's root, `_tree.ts`): it runs to completion, given the dataset its
 * `TRINITY_TASKSET_PATH` names and `--set` keys that only shrink steps, batch and lengths (or
 * name the authors' data); or it stops before any GPU work with one line naming the outside
 * system the config needs. `trinity_examples_test.ts` asserts each verdict, and docs/trinity.md
 * shows these tables (`render_verdicts.ts`).
 */

import type { LocalDatasets } from "./_datasets.ts";

/** A config that runs. */
export interface Runs {
  kind: "runs";
  /** The local dataset `TRINITY_TASKSET_PATH` names (absent: the config names its data). */
  data?: keyof LocalDatasets;
  /** `--set` keys making the run small: default {@link SMALL_RL}. */
  base?: readonly string[];
  /** `--set` overrides besides the small run's (batch, lengths, the authors' paths). */
  sets?: readonly string[];
  /** Train steps the run makes. */
  steps?: number;
  /** What it shows (for the docs). */
  note: string;
}

/** A config that stops before any GPU work, naming the outside system it needs. */
export interface Refuses {
  kind: "refuses";
  /** The outside system; the one-line error names it. */
  system: string;
}

/** The two configs of one run in two processes (trainer and explorer). */
export interface TwoProcesses {
  kind: "two_processes";
  /** The other config of the pair. */
  partner: string;
  data: keyof LocalDatasets;
  note: string;
}

export type Verdict = Runs | Refuses | TwoProcesses;

/** `--set` keys of every RL run: one step of one task, two rollouts, four tokens each. */
export const SMALL_RL = [
  "buffer.total_steps=1",
  "buffer.batch_size=1",
  "algorithm.repeat_times=2",
  "model.max_response_tokens=4",
];

/** `--set` keys of a train-only (SFT, DPO) run: one step of two rows. */
export const SMALL_TRAIN = ["buffer.total_steps=1", "buffer.train_batch_size=2"];

const runs = (note: string, more: Omit<Runs, "kind" | "note"> = {}): Runs => ({
  kind: "runs",
  note,
  ...more,
});
const refuses = (system: string): Refuses => ({ kind: "refuses", system });
const gsm8k = (note: string, more: Omit<Runs, "kind" | "note" | "data"> = {}) =>
  runs(note, { data: "gsm8k", ...more });

const ALFWORLD = refuses("ALFWorld");
const AGENTSCOPE = refuses("AgentScope");
const PYTHON_EXAMPLE = refuses("a Python class from Trinity's examples/ folder");
const DATA_JUICER = refuses("Data-Juicer");
const VLM = refuses("vision-language model");

/** Every config of Trinity-RFT v0.5.2's examples/ folder, by path from the tree's root. */
export const V052_VERDICTS: Readonly<Record<string, Verdict>> = {
  "examples/RAFT_alfworld/RAFT_alfworld_7B.yaml": ALFWORLD,
  "examples/RAFT_alfworld/RAFT_reflect_alfworld_7B.yaml": ALFWORLD,
  "examples/agentscope_frozenlake/frozenlake_agent.yaml": PYTHON_EXAMPLE,
  "examples/agentscope_react/gsm8k.yaml": AGENTSCOPE,
  "examples/agentscope_tool_react/agentscopev0_tool_react_dapo.yaml": AGENTSCOPE,
  "examples/agentscope_tool_react/agentscopev0_tool_react_gsm8k.yaml": AGENTSCOPE,
  "examples/agentscope_tool_react/agentscopev1_tool_react_dapo.yaml": AGENTSCOPE,
  "examples/agentscope_websearch/agentscopev1_websearch_agent.yaml": AGENTSCOPE,
  "examples/asymre_gsm8k/gsm8k.yaml": gsm8k("AsymRE: shifted baseline, OPMD loss"),
  "examples/asymre_math/math.yaml": runs("AsymRE on MATH, math_boxed_workflow", {
    data: "math",
  }),
  "examples/async_gsm8k/explorer.yaml": {
    kind: "two_processes",
    partner: "examples/async_gsm8k/trainer.yaml",
    data: "gsm8k",
    note: "explorer process of the async pair; finds its trainer through the run directory",
  },
  "examples/async_gsm8k/trainer.yaml": {
    kind: "two_processes",
    partner: "examples/async_gsm8k/explorer.yaml",
    data: "gsm8k",
    note: "trainer process of the async pair; trains every step the explorer makes",
  },
  "examples/bench/external_model.yaml": refuses("external model API"),
  "examples/bots/bots.yaml": PYTHON_EXAMPLE,
  "examples/bots/random.yaml": PYTHON_EXAMPLE,
  "examples/bots/ref_eval_collect.yaml": PYTHON_EXAMPLE,
  "examples/cispo_gsm8k/gsm8k.yaml": gsm8k("CISPO"),
  "examples/dapo_math/dapo.yaml": runs("DAPO-Math from the Hub cache, math_dapo_reward"),
  "examples/dpo_human_in_the_loop/dpo.yaml": refuses("Label Studio"),
  "examples/dpo_humanlike/dpo.yaml": runs("DPO on a Hub folder whose README names data.json", {
    data: "dpo",
    base: SMALL_TRAIN,
  }),
  "examples/entropy/clipb.yaml": runs("Clip_B entropy clipping, four eval sets", {
    data: "math",
    sets: ["buffer.explorer_input.eval_tasksets[0].path=${oc.env:TRINITY_TASKSET_PATH}"],
  }),
  "examples/entropy/clipv.yaml": runs("Clip_V entropy clipping, four eval sets", {
    data: "math",
    sets: ["buffer.explorer_input.eval_tasksets[0].path=${oc.env:TRINITY_TASKSET_PATH}"],
  }),
  "examples/grpo_alfworld/alfworld.yaml": ALFWORLD,
  "examples/grpo_alfworld_general_multi_step/alfworld.yaml": ALFWORLD,
  "examples/grpo_email_search/email_search.yaml": AGENTSCOPE,
  "examples/grpo_frozen_lake/frozen_lake.yaml": runs("FrozenLake text game, multi-turn", {
    data: "frozenLake",
    // Two moves a game: a longer transcript's logits (151936 words) outgrow the CPU adapter's
    // largest storage binding.
    sets: [
      "buffer.explorer_input.taskset.workflow_args.agent_max_steps=2",
      "buffer.explorer_input.eval_tasksets[0].workflow_args.agent_max_steps=2",
    ],
  }),
  "examples/grpo_gsm8k/gsm8k.yaml": gsm8k("GRPO"),
  "examples/grpo_gsm8k_experience_pipeline/dj_scoring_exp.yaml": refuses(
    "Data-Juicer recipe",
  ),
  "examples/grpo_gsm8k_experience_pipeline/gsm8k.yaml": DATA_JUICER,
  "examples/grpo_gsm8k_ruler/gsm8k_ruler.yaml": gsm8k("RULER: a judge model scores the group"),
  "examples/grpo_gsm8k_task_pipeline/gsm8k.yaml": DATA_JUICER,
  "examples/grpo_gsm8k_trainable_ruler/gsm8k_ruler.yaml": gsm8k(
    "RULER with the policy as its own judge",
    { sets: ["buffer.train_batch_size=4"] },
  ),
  "examples/grpo_lora_gsm8k/gsm8k.yaml": gsm8k("GRPO with a LoRA adapter"),
  "examples/grpo_math/math.yaml": runs("rm_gallery_reward's math_verify_reward", {
    data: "math",
  }),
  "examples/grpo_rubric_as_reward/rubric.yaml": runs("rubric judge model, Hub dataset", {
    sets: ["buffer.train_batch_size=2"],
  }),
  "examples/grpo_sciworld/sciworld.yaml": refuses("SciWorld"),
  "examples/grpo_toolcall/toolace.yaml": runs("tool calls on ToolACE (issue 45's workflow)"),
  "examples/grpo_vlm/vlm.yaml": VLM,
  "examples/grpo_webshop/webshop.yaml": refuses("WebShop"),
  "examples/learn_to_ask/train.yaml": PYTHON_EXAMPLE,
  "examples/mix_chord/mix_chord.yaml": runs("CHORD: scheduled mix of RL and SFT data", {
    data: "math",
    sets: ["buffer.train_batch_size=3"],
  }),
  "examples/mix_chord/mix_chord_toolace.yaml": runs(
    "CHORD on ToolACE (issue 45's workflow), SFT data from the Hub cache",
    { sets: ["buffer.train_batch_size=3"] },
  ),
  "examples/mix_math/mix_math.yaml": runs("MIX of RL and SFT data", {
    data: "math",
    sets: ["buffer.train_batch_size=3"],
  }),
  "examples/mix_vlm/mix_vlm.yaml": VLM,
  "examples/opd_gsm8k/opd_gsm8k.yaml": gsm8k("on-policy distillation from a teacher model"),
  "examples/opd_gsm8k/opd_gsm8k_jsd.yaml": gsm8k("JSD on-policy distillation"),
  "examples/opmd_gsm8k/opmd_gsm8k.yaml": gsm8k("OPMD"),
  "examples/ppo_countdown/countdown.yaml": runs("PPO with a critic, countdown_reward"),
  "examples/ppo_countdown_exp_replay/countdown.yaml": runs("PPO with experience replay"),
  "examples/ppo_countdown_megatron/countdown.yaml": refuses("Megatron"),
  "examples/rec_gsm8k/gsm8k.yaml": gsm8k("REC, one-side clipping"),
  "examples/sft_mot/sft.yaml": runs("SFT on a sharded Hub-cache subset", { base: SMALL_TRAIN }),
  "examples/sppo_gsm8k/gsm8k.yaml": gsm8k("sPPO"),
  "examples/tinker/tinker.yaml": refuses("Tinker"),
  "examples/topr_gsm8k/gsm8k.yaml": gsm8k("TOPR"),
};

/**
 * Configs of Trinity releases after v0.5.2 (tests/trinity/configs/later, copied to `later/` in
 * the tree), by path from the tree's root.
 */
export const LATER_VERDICTS: Readonly<Record<string, Verdict>> = {
  "later/cispo_gsm8k.yaml": gsm8k("CISPO"),
  "later/dapo_math.yaml": runs("DAPO-Math from the Hub cache, math_dapo_reward"),
  "later/gigpo_alfworld.yaml": ALFWORLD,
  "later/grpo_gsm8k.yaml": gsm8k("GRPO"),
  "later/grpo_gsm8k_openjudge.yaml": refuses("OpenJudge"),
  "later/grpo_intercode_sql.yaml": refuses("InterCode"),
  "later/gspo_gsm8k.yaml": gsm8k("GSPO"),
  "later/m2po_gsm8k_explorer.yaml": {
    kind: "two_processes",
    partner: "later/m2po_gsm8k_trainer.yaml",
    data: "gsm8k",
    note: "M2PO's explorer process (async_pair_test.ts)",
  },
  "later/m2po_gsm8k_trainer.yaml": {
    kind: "two_processes",
    partner: "later/m2po_gsm8k_explorer.yaml",
    data: "gsm8k",
    note: "M2PO's trainer process: the second-moment mask over each mini-batch",
  },
  "later/reinforceplusplus_gsm8k.yaml": gsm8k("REINFORCE++"),
  "later/rlcr_math.yaml": runs("rlcr_reward (format, accuracy, Brier score) on DAPO-Math"),
  "later/rloo_gsm8k.yaml": gsm8k("RLOO"),
  "later/rloo_gsm8k_sft_warmup.yaml": gsm8k("SFT warm-up stage, then RLOO"),
  "later/sapo_gsm8k.yaml": gsm8k("SAPO"),
  "later/sft_mot.yaml": runs("SFT on a sharded Hub-cache subset", { base: SMALL_TRAIN }),
};

/** Every config the tests know, by path from the tree's root. */
export const ALL_VERDICTS: Readonly<Record<string, Verdict>> = {
  ...V052_VERDICTS,
  ...LATER_VERDICTS,
};
