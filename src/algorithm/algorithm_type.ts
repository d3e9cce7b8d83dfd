/**
 * Algorithm types (Trinity's `ALGORITHM_TYPE`): one name (`algorithm_type: grpo`) bundling the
 * components an algorithm uses and the flags the run needs (critic, reference model, where
 * advantages are computed). Defaults follow Trinity's `default_config`; a run config overrides
 * them key by key. Every type of Trinity v0.5.2's registry is here, plus `dr_grpo` and `dapo`.
 * Differs from Trinity: the sample strategy is `default` where Trinity's guide says `warmup`
 * (Trinity's `warmup` is `default` too).
 */

import type { Args } from "../util/registry.ts";
import { Registry } from "../util/registry.ts";

/** Component names and arguments of an algorithm (YAML `algorithm:` keys, camel-cased). */
export interface AlgorithmDefaults {
  /** Samples per task (`repeat_times`). */
  repeatTimes: number;
  /** Name in the sample strategy registry (owned by the trainer's buffer reader). */
  sampleStrategy: string;
  /** Name in `ADVANTAGE_FN`; null for algorithms without advantages (sft, dpo). */
  advantageFn: string | null;
  /** Name in `POLICY_LOSS_FN`. */
  policyLossFn: string;
  /** Name in `KL_FN` of the KL subtracted from rewards (`none`: no penalty). */
  klPenaltyFn: string;
  /** Name in `KL_FN` of the KL loss term. */
  klLossFn: string;
  /** Name in `ENTROPY_LOSS_FN`. */
  entropyLossFn: string;
  /** Arguments overriding the advantage fn's defaults. */
  advantageFnArgs?: Args;
  /** Arguments overriding the policy loss's defaults. */
  policyLossFnArgs?: Args;
  /** Whether the explorer refills groups of equal rewards (DAPO's dynamic sampling). */
  dynamicSampling?: boolean;
}

/** The flags and components of an RL type without a critic: the same as `ppo`'s but these. */
function groupRl(
  components: Partial<AlgorithmDefaults> & Pick<AlgorithmDefaults, "advantageFn">,
  flags: Partial<Omit<AlgorithmType, "defaultConfig">> = {},
): AlgorithmType {
  return { ...GROUP_RL, ...flags, defaultConfig: { ...RL_DEFAULTS, ...components } };
}

/** The components of an RL type with neither KL nor entropy term (`asymre`, `sppo`, ...). */
const NO_REGULARISER = { klLossFn: "none", entropyLossFn: "none" } as const;

/** An algorithm type. */
export interface AlgorithmType {
  /** Whether a critic (value model) is trained alongside. */
  readonly useCritic: boolean;
  /** Whether reference-model log-probs are needed (KL terms, DPO). */
  readonly useReference: boolean;
  /** Whether the trainer computes advantages (else the experience pipeline does). */
  readonly computeAdvantageInTrainer: boolean;
  /** Whether batches may be reordered to balance micro-batches (DPO keeps its pairs). */
  readonly canBalanceBatch: boolean;
  /** Shape of the training data: rollouts, SFT conversations or preference pairs. */
  readonly schema: "experience" | "sft" | "dpo";
  /** The components and their arguments. */
  readonly defaultConfig: AlgorithmDefaults;
}

/** Flags of critic-free RL with a reference model, advantages computed in the pipeline. */
const GROUP_RL = {
  useCritic: false,
  useReference: true,
  computeAdvantageInTrainer: false,
  canBalanceBatch: true,
  schema: "experience",
} as const;

/** The components most RL algorithms share: PPO's loss, a k2 KL loss, the entropy term. */
const RL_DEFAULTS = {
  repeatTimes: 2,
  sampleStrategy: "default",
  policyLossFn: "ppo",
  klPenaltyFn: "none",
  klLossFn: "k2",
  entropyLossFn: "default",
} as const;

/** The built-in algorithm types. */
export const ALGORITHM_TYPE: Registry<AlgorithmType> = new Registry<AlgorithmType>("algorithm", [
  ["ppo", {
    ...GROUP_RL,
    useCritic: true,
    computeAdvantageInTrainer: true,
    defaultConfig: { ...RL_DEFAULTS, repeatTimes: 1, advantageFn: "ppo" },
  }],
  ["grpo", { ...GROUP_RL, defaultConfig: { ...RL_DEFAULTS, advantageFn: "grpo" } }],
  // Dr. GRPO (arXiv:2503.20783): no std division, a constant length normaliser, no KL.
  ["dr_grpo", {
    ...GROUP_RL,
    useReference: false,
    defaultConfig: {
      ...RL_DEFAULTS,
      advantageFn: "grpo",
      advantageFnArgs: { std_norm: "none" },
      policyLossFnArgs: { loss_agg_mode: "seq-mean-token-sum-norm" },
      klLossFn: "none",
    },
  }],
  // DAPO (arXiv:2503.14476): clip-higher, token-mean, no KL, dynamic sampling (groups of equal
  // rewards dropped and refilled by the explorer; the advantage fn skips any left).
  ["dapo", {
    ...GROUP_RL,
    useReference: false,
    defaultConfig: {
      ...RL_DEFAULTS,
      repeatTimes: 16,
      advantageFn: "grpo",
      advantageFnArgs: { std_threshold: 0 },
      policyLossFnArgs: { clip_range_low: 0.2, clip_range_high: 0.28, loss_agg_mode: "token-mean" },
      klLossFn: "none",
      dynamicSampling: true,
    },
  }],
  ["rloo", {
    ...GROUP_RL,
    computeAdvantageInTrainer: true,
    defaultConfig: { ...RL_DEFAULTS, advantageFn: "rloo" },
  }],
  ["reinforceplusplus", {
    ...GROUP_RL,
    computeAdvantageInTrainer: true,
    defaultConfig: { ...RL_DEFAULTS, advantageFn: "reinforceplusplus" },
  }],
  ["opmd", {
    ...GROUP_RL,
    defaultConfig: { ...RL_DEFAULTS, advantageFn: "opmd", policyLossFn: "opmd" },
  }],
  ["gspo", {
    ...GROUP_RL,
    defaultConfig: { ...RL_DEFAULTS, advantageFn: "grpo", policyLossFn: "gspo" },
  }],
  ["cispo", {
    ...GROUP_RL,
    defaultConfig: { ...RL_DEFAULTS, advantageFn: "grpo", policyLossFn: "cispo" },
  }],
  ["sapo", {
    ...GROUP_RL,
    defaultConfig: { ...RL_DEFAULTS, advantageFn: "grpo", policyLossFn: "sapo" },
  }],
  ["grpo_verl", groupRl({ advantageFn: "grpo_verl" }, { computeAdvantageInTrainer: true })],
  // AsymRE (arXiv:2506.20520): REINFORCE with a shifted baseline, OPMD's loss, no KL.
  [
    "asymre",
    groupRl(
      { advantageFn: "asymre", policyLossFn: "opmd", ...NO_REGULARISER },
      { useReference: false },
    ),
  ],
  // TOPR (arXiv:2503.14286): tapered off-policy REINFORCE; Trinity's default advantage is the
  // reward itself (`reinforce`).
  ["topr", groupRl({ advantageFn: "reinforce", policyLossFn: "topr" })],
  [
    "sppo",
    groupRl(
      { advantageFn: "opmd", policyLossFn: "sppo", ...NO_REGULARISER },
      { useReference: false },
    ),
  ],
  ["rec", groupRl({ advantageFn: "rec", policyLossFn: "rec" })],
  // M2PO (Trinity after v0.5.2): GRPO's advantages, the second-moment masked loss, no KL.
  [
    "m2po",
    groupRl(
      { repeatTimes: 8, advantageFn: "grpo", policyLossFn: "m2po", ...NO_REGULARISER },
      { useReference: false },
    ),
  ],
  // Multi-step agents: one experience per model call, the outcome broadcast to every step.
  ["multi_step_grpo", groupRl({ repeatTimes: 8, advantageFn: "step_wise_grpo" })],
  // On-policy distillation: advantages from a teacher's log-probs (the workflow records them).
  [
    "on_policy_distill",
    groupRl({
      repeatTimes: 8,
      advantageFn: "on_policy_distill",
      advantageFnArgs: { kl_coef: 1.0 },
      ...NO_REGULARISER,
    }, { useReference: false, computeAdvantageInTrainer: true }),
  ],
  [
    "jsd",
    groupRl({
      repeatTimes: 8,
      advantageFn: "jsd",
      advantageFnArgs: { kl_coef: 1.0, lambda_coef: 0.5 },
      ...NO_REGULARISER,
    }, { useReference: false, computeAdvantageInTrainer: true }),
  ],
  // RAFT: SFT on the explorer's rollouts (reward-ranked fine-tuning; filter with operators).
  [
    "raft",
    groupRl({
      repeatTimes: 1,
      advantageFn: null,
      policyLossFn: "sft",
      ...NO_REGULARISER,
    }, { useReference: false }),
  ],
  ["sft", {
    ...GROUP_RL,
    useReference: false,
    schema: "sft",
    defaultConfig: {
      repeatTimes: 1,
      sampleStrategy: "default",
      advantageFn: null,
      policyLossFn: "sft",
      klPenaltyFn: "none",
      klLossFn: "none",
      entropyLossFn: "none",
    },
  }],
  // Trinity forces a k2 KL loss on DPO (and repeat_times 2, one pair per prompt).
  ["dpo", {
    ...GROUP_RL,
    canBalanceBatch: false,
    schema: "dpo",
    defaultConfig: { ...RL_DEFAULTS, advantageFn: null, policyLossFn: "dpo" },
  }],
  // Trinity's MIX: rollouts and expert data in one batch. Its config names no KL fns, so the
  // global defaults apply (k2 loss, hence the reference model).
  ["mix", {
    ...GROUP_RL,
    defaultConfig: {
      ...RL_DEFAULTS,
      repeatTimes: 8,
      sampleStrategy: "mix",
      advantageFn: "grpo",
      policyLossFn: "mix",
      entropyLossFn: "mix",
    },
  }],
  // CHORD (arXiv:2508.11408): MIX with a scheduled mu and phi-weighted SFT.
  [
    "mix_chord",
    groupRl({
      repeatTimes: 8,
      sampleStrategy: "mix",
      advantageFn: "grpo",
      policyLossFn: "mix_chord",
      entropyLossFn: "mix",
    }),
  ],
]);
