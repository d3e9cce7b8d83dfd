/**
 * Resolves a stage's `algorithm` section against its algorithm type (Trinity's
 * `ALGORITHM_TYPE.default_config`): each component is the section's choice or the type's
 * default, its args the type's default args overridden by the section's, each checked by its
 * registry; and which component applies the advantages (the one place that decides it). No GPU
 * work.
 */

import { ADVANTAGE_FN } from "./advantage/mod.ts";
import { ALGORITHM_TYPE, type AlgorithmType } from "./algorithm_type.ts";
import type { ConfiguredAdvantageFn } from "./apply_advantages.ts";
import { ENTROPY_LOSS_FN } from "./entropy.ts";
import { KL_FN } from "./kl.ts";
import { POLICY_LOSS_FN } from "./policy_loss/mod.ts";
import { SAMPLE_STRATEGY } from "./sample_strategy.ts";
import { type Args, configure } from "../util/registry.ts";

/**
 * A config's `algorithm` section (YAML keys camel-cased): the algorithm type and the components
 * it overrides; a component left undefined takes the type's default.
 */
export interface AlgorithmSection {
  algorithmType: string;
  repeatTimes?: number;
  sampleStrategy?: string;
  sampleStrategyArgs: Args;
  advantageFn?: string;
  advantageFnArgs: Args;
  policyLossFn?: string;
  policyLossFnArgs: Args;
  klLossFn?: string;
  klLossFnArgs: Args;
  entropyLossFn?: string;
  entropyLossFnArgs: Args;
  /** DAPO's dynamic sampling; `enable` undefined: the algorithm type's default. */
  dynamicSampling: { enable?: boolean; maxNumGenBatches: number };
}

/** DAPO's dynamic sampling, when an algorithm enables it (`algorithm.dynamic_sampling`). */
export interface DynamicSampling {
  /** Most batches of tasks drawn per explore step; 0 = no limit. */
  maxNumGenBatches: number;
}

/** A component that can apply advantages: the explorer's experience pipeline or the trainer. */
export type AdvantageSide = "explorer" | "trainer";

/** An algorithm ready to run. */
export interface ResolvedAlgorithm {
  name: string;
  type: AlgorithmType;
  repeatTimes: number;
  sampleStrategy: string;
  sampleStrategyArgs: Args;
  /** Absent for algorithms without advantages (sft, dpo). */
  advantageFn?: ConfiguredAdvantageFn;
  /**
   * The side that applies `advantageFn` when the explorer runs (modes `both`, `explore`): the
   * trainer when the algorithm type or the fn computes in the trainer, else the explorer.
   */
  advantageSide: AdvantageSide;
  policyLossFn: string;
  policyLossFnArgs: Args;
  klLossFn: string;
  klLossFnArgs: Args;
  entropyLossFn: string;
  entropyLossFnArgs: Args;
  /** Set when the explorer refills filtered groups. */
  dynamicSampling?: DynamicSampling;
}

/** The algorithm of `section` (see the file comment); throws naming the bad component. */
export function resolveAlgorithm(section: AlgorithmSection): ResolvedAlgorithm {
  const resolved = resolveComponents(section);
  const { policyLossFn, klLossFn, entropyLossFn, sampleStrategy } = resolved;
  configure(POLICY_LOSS_FN, policyLossFn, resolved.policyLossFnArgs);
  if (klLossFn !== "none") configure(KL_FN, klLossFn, resolved.klLossFnArgs);
  if (entropyLossFn !== "none") {
    configure(ENTROPY_LOSS_FN, entropyLossFn, resolved.entropyLossFnArgs);
  }
  configure(SAMPLE_STRATEGY, sampleStrategy, resolved.sampleStrategyArgs);
  return resolved;
}

/** The components of `section` over its type's defaults (the advantage fn configured). */
function resolveComponents(section: AlgorithmSection): ResolvedAlgorithm {
  const type = ALGORITHM_TYPE.get(section.algorithmType);
  const d = type.defaultConfig;
  const advantageName = section.advantageFn ?? d.advantageFn;
  const advantageFn = advantageName === null
    ? undefined
    : configure(ADVANTAGE_FN, advantageName, { ...d.advantageFnArgs, ...section.advantageFnArgs });
  return {
    name: section.algorithmType,
    type,
    repeatTimes: section.repeatTimes ?? d.repeatTimes,
    sampleStrategy: section.sampleStrategy ?? d.sampleStrategy,
    sampleStrategyArgs: section.sampleStrategyArgs,
    advantageFn,
    advantageSide: type.computeAdvantageInTrainer || advantageFn?.entry.computeInTrainer
      ? "trainer"
      : "explorer",
    policyLossFn: section.policyLossFn ?? d.policyLossFn,
    policyLossFnArgs: { ...d.policyLossFnArgs, ...section.policyLossFnArgs },
    klLossFn: section.klLossFn ?? d.klLossFn,
    klLossFnArgs: section.klLossFnArgs,
    entropyLossFn: section.entropyLossFn ?? d.entropyLossFn,
    entropyLossFnArgs: section.entropyLossFnArgs,
    dynamicSampling: (section.dynamicSampling.enable ?? d.dynamicSampling ?? false) && advantageFn
      ? { maxNumGenBatches: section.dynamicSampling.maxNumGenBatches }
      : undefined,
  };
}

/**
 * The advantage fn that `side` applies in a stage of mode `mode`, or undefined when the other
 * side applies it or the algorithm has none. In mode `train` the trainer applies it (its
 * experiences come from a buffer); otherwise `algorithm.advantageSide` does.
 */
export function advantageFnFor(
  algorithm: ResolvedAlgorithm,
  side: AdvantageSide,
  mode: "both" | "explore" | "train" | "bench",
): ConfiguredAdvantageFn | undefined {
  const applies = mode === "train" ? "trainer" : algorithm.advantageSide;
  return applies === side ? algorithm.advantageFn : undefined;
}
