/**
 * `reward_std_filter`: drops whole groups (experiences sharing `info.taskId`) whose reward std
 * is <= `threshold`; at the default 0 these are the groups whose rewards are all equal, which
 * give GRPO no signal (DAPO's dynamic sampling). The std is the unbiased one GRPO uses, over the
 * group's non-null rewards, and is 0 for fewer than two: a single-sample group is dropped.
 */

import { std } from "../../algorithm/advantage/advantage_fn.ts";
import { groupByTask, type OperatorFactory } from "./operator.ts";

/** Drops groups with reward std <= `threshold`; metrics `filtered_count`, `filtered_groups`. */
export const rewardStdFilter: OperatorFactory = {
  defaultArgs: { threshold: 0 },
  create(name, args) {
    const threshold = args.threshold as number;
    return {
      name,
      process(exps) {
        const dropped = new Set<string>();
        for (const [taskId, group] of groupByTask(exps)) {
          const rewards = group.flatMap((exp) => exp.reward === null ? [] : [exp.reward]);
          if (std(rewards) <= threshold) dropped.add(taskId);
        }
        const experiences = exps.filter((exp) => !dropped.has(exp.info.taskId));
        return {
          experiences,
          metrics: {
            filtered_count: exps.length - experiences.length,
            filtered_groups: dropped.size,
          },
        };
      },
    };
  },
};
