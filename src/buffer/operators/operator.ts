/**
 * The experience operator contract (Trinity's `ExperienceOperator`): one pass over the
 * experiences of an explore step that returns those it keeps (possibly changed) and numbers to
 * log. Also the grouping by task that the group-level operators share.
 */

import type { Args, Configurable } from "../../util/registry.ts";
import type { Experience } from "../experience.ts";

/** What an operator returns: the experiences it keeps, in input order, and its metrics. */
export interface OperatorResult {
  experiences: Experience[];
  /** Numbers for logging, keyed without the operator's name (the pipeline adds it). */
  metrics: Record<string, number>;
}

/** A configured operator, ready to process batches. */
export interface ExperienceOperator {
  /** The registered name; prefixes the operator's metrics in a pipeline. */
  readonly name: string;
  /** Processes one explore step's experiences; must not mutate `exps`. */
  process(exps: readonly Experience[]): OperatorResult;
}

/** A registry entry: default arguments and a constructor from resolved arguments. */
export interface OperatorFactory extends Configurable {
  /** An operator named `name` with `args` (already checked against `defaultArgs`). */
  create(name: string, args: Args): ExperienceOperator;
}

/** The experiences of `exps` by `info.taskId`, groups in order of first appearance. */
export function groupByTask(exps: readonly Experience[]): Map<string, Experience[]> {
  const groups = new Map<string, Experience[]>();
  for (const exp of exps) {
    const group = groups.get(exp.info.taskId);
    if (group) group.push(exp);
    else groups.set(exp.info.taskId, [exp]);
  }
  return groups;
}
