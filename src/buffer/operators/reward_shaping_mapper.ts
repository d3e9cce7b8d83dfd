/**
 * `reward_shaping_mapper` (Trinity's `RewardShapingMapper`): reshapes each experience's reward
 * with numbers its workflow (or an earlier operator) recorded, rule by rule
 * (`reward_shaping_configs`: `stats_key`, `op_type` ADD / SUB / MUL / DIV, `weight`):
 * `reward op= weight * metrics[stats_key]`. A rule whose key the experience lacks, a division by
 * 0 and a null reward leave the reward as it is. Metrics: the reward change's mean, min, max.
 */

import type { Experience } from "../experience.ts";
import type { OperatorFactory } from "./operator.ts";

/** One shaping rule. */
interface ShapingRule {
  stats_key: string;
  op_type: string;
  weight: number;
}

const OPS = ["ADD", "SUB", "MUL", "DIV"];

/** The rules of `configs`, checked: throws naming the rule and key that is wrong. */
function rulesOf(configs: unknown): ShapingRule[] {
  return (configs as Record<string, unknown>[]).map((rule, i) => {
    const fail = (detail: string): never => {
      throw new Error(
        `Cannot configure experience operator "reward_shaping_mapper": reward_shaping_configs[${i}] ${detail}`,
      );
    };
    if (typeof rule !== "object" || rule === null) fail("expected a mapping");
    const { stats_key, op_type = "ADD", weight = 1 } = rule;
    if (typeof stats_key !== "string") fail(`stats_key expected a string, found ${stats_key}`);
    if (!OPS.includes(op_type as string)) fail(`op_type expected one of ${OPS.join(", ")}`);
    if (typeof weight !== "number") fail(`weight expected a number, found ${weight}`);
    return { stats_key, op_type, weight } as ShapingRule;
  });
}

/** The reward of `exp` after `rules`. */
function shaped(exp: Experience, rules: readonly ShapingRule[]): number | null {
  let reward = exp.reward;
  for (const { stats_key, op_type, weight } of rules) {
    const stat = exp.metrics?.[stats_key];
    if (reward === null || stat === undefined) continue;
    const term = weight * stat;
    if (op_type === "ADD") reward += term;
    else if (op_type === "SUB") reward -= term;
    else if (op_type === "MUL") reward *= term;
    else if (term !== 0) reward /= term;
  }
  return reward;
}

/** Reshapes rewards by recorded numbers; metrics `reward_diff/{mean,min,max}`. */
export const rewardShapingMapper: OperatorFactory = {
  defaultArgs: { reward_shaping_configs: [] },
  create(name, args) {
    const rules = rulesOf(args.reward_shaping_configs);
    return {
      name,
      process(exps) {
        const diffs: number[] = [];
        const experiences = exps.map((exp) => {
          const reward = shaped(exp, rules);
          diffs.push(reward === null || exp.reward === null ? 0 : reward - exp.reward);
          return reward === exp.reward ? exp : { ...exp, reward };
        });
        const mean = diffs.length ? diffs.reduce((a, b) => a + b, 0) / diffs.length : 0;
        return {
          experiences,
          metrics: {
            "reward_diff/mean": mean,
            "reward_diff/min": diffs.length ? Math.min(...diffs) : 0,
            "reward_diff/max": diffs.length ? Math.max(...diffs) : 0,
          },
        };
      },
    };
  },
};
