/**
 * The experience operator registry (Trinity's `EXPERIENCE_OPERATORS`) with the built-in
 * operators registered explicitly here, and the pipeline that runs a configured list of them
 * over one explore step; plugins add theirs with `EXPERIENCE_OPERATORS.register(name, factory)`.
 */

import { configure, Registry } from "../../util/registry.ts";
import type { Experience } from "../experience.ts";
import { dapoDynamicSampling } from "./dapo_dynamic_sampling.ts";
import { invalidRewardFilter } from "./invalid_reward_filter.ts";
import type { ExperienceOperator, OperatorFactory, OperatorResult } from "./operator.ts";
import { maskResponseTruncated } from "./mask_response_truncated.ts";
import { passRateCalculator } from "./pass_rate_calculator.ts";
import { rewardFilter } from "./reward_filter.ts";
import { rewardShapingMapper } from "./reward_shaping_mapper.ts";
import { rewardStdFilter } from "./reward_std_filter.ts";

export {
  type ExperienceOperator,
  groupByTask,
  type OperatorFactory,
  type OperatorResult,
} from "./operator.ts";

/**
 * Operators by name: `dapo_dynamic_sampling`, `invalid_reward_filter`,
 * `mask_response_truncated`, `pass_rate_calculator`, `reward_filter`, `reward_shaping_mapper`,
 * `reward_std_filter`.
 */
export const EXPERIENCE_OPERATORS: Registry<OperatorFactory> = new Registry<OperatorFactory>(
  "experience operator",
  [
    ["reward_filter", rewardFilter],
    ["reward_std_filter", rewardStdFilter],
    ["invalid_reward_filter", invalidRewardFilter],
    ["pass_rate_calculator", passRateCalculator],
    ["dapo_dynamic_sampling", dapoDynamicSampling],
    ["mask_response_truncated", maskResponseTruncated],
    ["reward_shaping_mapper", rewardShapingMapper],
  ],
);

/** One entry of a YAML `operators` list: a registered name and its `args`. */
export interface OperatorSpec {
  name: string;
  args?: Readonly<Record<string, unknown>>;
}

/**
 * The operators of `specs`, in order, with their arguments checked. Throws on an unknown name
 * or argument, and on a name listed twice (its metrics would collide).
 */
export function createOperators(specs: readonly OperatorSpec[]): ExperienceOperator[] {
  const seen = new Set<string>();
  return specs.map(({ name, args }) => {
    if (seen.has(name)) {
      throw new Error(`Cannot configure experience operator "${name}": it is listed twice`);
    }
    seen.add(name);
    const { entry, args: resolved } = configure(EXPERIENCE_OPERATORS, name, args);
    return entry.create(name, resolved);
  });
}

/**
 * Runs `operators` in order, each on what the previous kept. Returns the experiences the last
 * kept and every operator's metrics as `<operator name>/<metric>`.
 */
export function runOperators(
  operators: readonly ExperienceOperator[],
  exps: readonly Experience[],
): OperatorResult {
  let experiences = [...exps];
  const metrics: Record<string, number> = {};
  for (const operator of operators) {
    const result = operator.process(experiences);
    experiences = result.experiences;
    for (const [key, value] of Object.entries(result.metrics)) {
      metrics[`${operator.name}/${key}`] = value;
    }
  }
  return { experiences, metrics };
}
