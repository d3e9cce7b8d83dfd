/**
 * `pass_rate_calculator`: keeps every experience and reports how many pass (reward >=
 * `threshold`; a null reward does not pass), overall and per group of one task: the mean of the
 * groups' pass rates and how many groups all pass or none pass (groups that carry no GRPO signal).
 */

import { mean } from "../../algorithm/advantage/advantage_fn.ts";
import { groupByTask, type OperatorFactory } from "./operator.ts";

/**
 * Metrics `count`, `groups`, `all_pass_groups`, `no_pass_groups` and, when there is at least
 * one experience, `pass_rate` (overall) and `group_pass_rate_mean`.
 */
export const passRateCalculator: OperatorFactory = {
  defaultArgs: { threshold: 1 },
  create(name, args) {
    const threshold = args.threshold as number;
    const passes = (reward: number | null) => reward !== null && reward >= threshold;
    return {
      name,
      process(exps) {
        const groupRates = [...groupByTask(exps).values()].map((group) =>
          group.filter((exp) => passes(exp.reward)).length / group.length
        );
        const metrics: Record<string, number> = {
          count: exps.length,
          groups: groupRates.length,
          all_pass_groups: groupRates.filter((rate) => rate === 1).length,
          no_pass_groups: groupRates.filter((rate) => rate === 0).length,
        };
        if (exps.length > 0) {
          metrics.pass_rate = exps.filter((exp) => passes(exp.reward)).length / exps.length;
          metrics.group_pass_rate_mean = mean(groupRates);
        }
        return { experiences: [...exps], metrics };
      },
    };
  },
};
