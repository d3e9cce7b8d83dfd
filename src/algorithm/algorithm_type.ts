/**
 * Algorithm types (Trinity's `ALGORITHM_TYPE`): one name (`algorithm_type: grpo`) bundling the
 * components an algorithm uses and the flags the run needs (critic, reference model, where
 * advantages are computed). Defaults follow Trinity's `default_config`; a run config overrides
 * them key by key. Differs from Trinity: the sample strategy is `default` where Trinity's guide
 * says `warmup` (default plus an SFT warm-up buffer; later Trinity versions use `default` too).
 */

import type { Args } from "./registry.ts";
import { Registry } from "./registry.ts";

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
]);
