/**
 * DAPO's dynamic sampling (arXiv:2503.14476, section 3.2) on the explorer's side: groups whose
 * rewards are all equal give GRPO-style advantages no signal, so the `reward_std_filter` operator
 * drops them and the explorer draws further batches of tasks, within the same explore step and
 * policy version, until `batch_size` groups survive the experience pipeline or
 * `max_num_gen_batches` batches were drawn (verl's `filter_groups`). Surplus groups of the last
 * batch are discarded, so a train step sees `batch_size` groups as without filtering.
 */

import type { DynamicSampling } from "../algorithm/resolve_algorithm.ts";
import type { Experience } from "../buffer/experience.ts";
import { createOperators, type ExperienceOperator, groupByTask } from "../buffer/operators/mod.ts";

/** The operator dynamic sampling relies on to drop equal-reward groups. */
const GROUP_FILTER = "reward_std_filter";
/** Group filters that, when listed, stand in for {@link GROUP_FILTER}. */
const GROUP_FILTERS = [GROUP_FILTER, "dapo_dynamic_sampling"];

/**
 * `operators` with a `reward_std_filter` (default threshold 0) appended when dynamic sampling is
 * on and the pipeline has no group filter (`reward_std_filter`, `dapo_dynamic_sampling`);
 * unchanged otherwise.
 */
export function withGroupFilter(
  operators: readonly ExperienceOperator[],
  dynamicSampling: DynamicSampling | undefined,
): ExperienceOperator[] {
  if (!dynamicSampling || operators.some((op) => GROUP_FILTERS.includes(op.name))) {
    return [...operators];
  }
  return [...operators, ...createOperators([{ name: GROUP_FILTER }])];
}

/** The number of groups (distinct `info.taskId`) in `exps`. */
export function countGroups(exps: readonly Experience[]): number {
  return new Set(exps.map((exp) => exp.info.taskId)).size;
}

/** Whether another batch may be drawn after `drawn` batches that kept `groups` groups. */
export function wantsMoreBatches(
  dynamicSampling: DynamicSampling | undefined,
  drawn: number,
  groups: number,
  batchSize: number,
): boolean {
  if (!dynamicSampling || groups >= batchSize) return false;
  const limit = dynamicSampling.maxNumGenBatches;
  return limit === 0 || drawn < limit;
}

/** The experiences of the first `n` groups of `exps` (by first appearance), in input order. */
export function firstGroups(exps: readonly Experience[], n: number): Experience[] {
  const kept = new Set([...groupByTask(exps).keys()].slice(0, n));
  return exps.filter((exp) => kept.has(exp.info.taskId));
}
