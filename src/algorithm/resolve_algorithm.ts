/**
 * A stage's algorithm ready to run: each component of its loaded `algorithm` section (every
 * component named: the loader filled the algorithm type's defaults) looked up in its registry
 * and its args resolved, once per stage; the policy loss and entropy loss also built on symbolic
 * inputs, so checks across their args run before any GPU work; and which side applies the
 * advantages (the one place that decides it). No GPU work.
 */

import { ADVANTAGE_FN } from "./advantage/mod.ts";
import { ALGORITHM_TYPE, type AlgorithmType } from "./algorithm_type.ts";
import type { ConfiguredAdvantageFn } from "./apply_advantages.ts";
import { ENTROPY_LOSS_FN, type EntropyLossFn } from "./entropy.ts";
import { KL_FN, type KlFn } from "./kl.ts";
import { POLICY_LOSS_FN, type PolicyLossFn } from "./policy_loss/mod.ts";
import { SAMPLE_STRATEGY, type SampleStrategy } from "./sample_strategy.ts";
import { Graph } from "../graph/graph.ts";
import {
  type Args,
  type Configurable,
  configure,
  type Configured,
  type Registry,
} from "../util/registry.ts";

/** A loaded config's `algorithm` section (YAML keys camel-cased), as this file reads it. */
export interface AlgorithmSection {
  algorithmType: string;
  repeatTimes: number;
  sampleStrategy: string;
  sampleStrategyArgs: Args;
  /** Absent for algorithms without advantages (sft, dpo). */
  advantageFn?: string;
  advantageFnArgs: Args;
  policyLossFn: string;
  policyLossFnArgs: Args;
  klPenaltyFn: string;
  klPenaltyFnArgs: Args;
  klLossFn: string;
  klLossFnArgs: Args;
  entropyLossFn: string;
  entropyLossFnArgs: Args;
  dynamicSampling: { enable: boolean; maxNumGenBatches: number };
}

/** DAPO's dynamic sampling, when an algorithm enables it (`algorithm.dynamic_sampling`). */
export interface DynamicSampling {
  /** Most batches of tasks drawn per explore step; 0 = no limit. */
  maxNumGenBatches: number;
}

/** The keys of `AlgorithmSection` naming a component (each with its `...Args`). */
type ComponentKey =
  | "sampleStrategy"
  | "advantageFn"
  | "policyLossFn"
  | "klPenaltyFn"
  | "klLossFn"
  | "entropyLossFn";

/** A component that can apply advantages: the explorer's experience pipeline or the trainer. */
export type AdvantageSide = "explorer" | "trainer";

/** An algorithm ready to run: its components configured. */
export interface ResolvedAlgorithm {
  name: string;
  type: AlgorithmType;
  repeatTimes: number;
  sampleStrategy: Configured<SampleStrategy>;
  /** Absent for algorithms without advantages (sft, dpo). */
  advantageFn?: ConfiguredAdvantageFn;
  /**
   * The side that applies `advantageFn` when the explorer runs (modes `both`, `explore`): the
   * trainer when the algorithm type or the fn computes in the trainer, else the explorer.
   */
  advantageSide: AdvantageSide;
  policyLoss: Configured<PolicyLossFn>;
  /** The KL loss term (`none`: no term). */
  klLoss: Configured<KlFn>;
  /** The KL penalty on rewards (`none`: no penalty). */
  klPenalty: Configured<KlFn>;
  /** The entropy term (`none`: no term). */
  entropyLoss: Configured<EntropyLossFn>;
  /** Set when the explorer refills filtered groups. */
  dynamicSampling?: DynamicSampling;
}

/**
 * Runs `configure`; the caller's wrapper attributes what it throws to the section's key `key`
 * (e.g. `algorithm.policy_loss_fn_args`).
 */
export type KeyCheck = <T>(key: string, configure: () => T) => T;

/**
 * The algorithm of `section` (see the file comment). `check` wraps each component's lookup
 * and args so that an error names the section's key; by default errors pass unchanged.
 */
export function resolveAlgorithm(
  section: AlgorithmSection,
  check: KeyCheck = (_key, configure) => configure(),
): ResolvedAlgorithm {
  const type = ALGORITHM_TYPE.get(section.algorithmType);
  const component = <T extends Configurable>(
    key: ComponentKey,
    registry: Registry<T>,
  ): Configured<T> => {
    const name = section[key] ?? "none";
    const at = `algorithm.${key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`;
    check(at, () => registry.get(name));
    return check(`${at}_args`, () => configure(registry, name, section[`${key}Args`]));
  };
  const s = section;
  const advantageFn = s.advantageFn === undefined
    ? undefined
    : component("advantageFn", ADVANTAGE_FN);
  const policyLoss = component("policyLossFn", POLICY_LOSS_FN);
  check("algorithm.policy_loss_fn_args", () => buildPolicyLoss(policyLoss));
  const klLoss = component("klLossFn", KL_FN);
  const klPenalty = component("klPenaltyFn", KL_FN);
  const entropyLoss = component("entropyLossFn", ENTROPY_LOSS_FN);
  check("algorithm.entropy_loss_fn_args", () => buildEntropyLoss(entropyLoss));
  const sampleStrategy = component("sampleStrategy", SAMPLE_STRATEGY);
  return {
    name: s.algorithmType,
    type,
    repeatTimes: s.repeatTimes,
    sampleStrategy,
    advantageFn,
    advantageSide: type.computeAdvantageInTrainer || advantageFn?.entry.computeInTrainer
      ? "trainer"
      : "explorer",
    policyLoss,
    klLoss,
    klPenalty,
    entropyLoss,
    dynamicSampling: s.dynamicSampling.enable && advantageFn
      ? { maxNumGenBatches: s.dynamicSampling.maxNumGenBatches }
      : undefined,
  };
}

/** Builds the policy loss on symbolic inputs of a 2 x 3 batch (its checks across args run). */
function buildPolicyLoss({ entry, args }: Configured<PolicyLossFn>): void {
  const g = new Graph();
  const tokens = () => g.input([2, 3]);
  const scalars = Object.keys(entry.stepScalars?.(args, 1) ?? {});
  entry.build({
    scalars: Object.fromEntries(scalars.map((name) => [name, g.input([])])),
    logp: tokens(),
    mask: tokens(),
    oldLogp: tokens(),
    advantages: g.input([2]),
    refLogp: tokens(),
    isExpert: g.input([2]),
  }, args);
}

/** Builds the entropy loss on symbolic inputs. */
function buildEntropyLoss({ entry, args }: Configured<EntropyLossFn>): void {
  const g = new Graph();
  entry.build({ entropy: g.input([2, 3]), mask: g.input([2, 3]), isExpert: g.input([2]) }, args);
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
