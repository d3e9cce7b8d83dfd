/**
 * `dapo_dynamic_sampling` (Trinity's `DAPODynamicSamplingFilter`; DAPO, arXiv:2503.14476
 * section 3.2): keeps a group (experiences sharing `info.taskId`) only when some but not all of
 * its rollouts are correct, a rollout being correct when its `metric_key` metric (else its
 * reward) is above `correct_threshold`; a single-rollout group is dropped. With DAPO's dynamic
 * sampling on, the explorer refills the dropped groups (`src/explorer/dynamic_sampling.ts`).
 */

import type { Experience } from "../experience.ts";
import { groupByTask, type OperatorFactory } from "./operator.ts";

/**
 * Drops all-correct and all-wrong groups; metrics `filtered_count`, `dropped_all_correct`,
 * `dropped_all_wrong` (experiences).
 */
export const dapoDynamicSampling: OperatorFactory = {
  defaultArgs: { metric_key: "accuracy", correct_threshold: 0 },
  create(name, args) {
    const key = args.metric_key as string;
    const threshold = args.correct_threshold as number;
    const isCorrect = (exp: Experience) =>
      (exp.metrics?.[key] ?? exp.reward ?? -Infinity) > threshold;
    return {
      name,
      process(exps) {
        const kept = new Set<string>();
        let [allCorrect, allWrong] = [0, 0];
        for (const [taskId, group] of groupByTask(exps)) {
          if (group.length < 2) continue;
          const correct = group.filter(isCorrect).length;
          if (correct === 0) allWrong += group.length;
          else if (correct === group.length) allCorrect += group.length;
          else kept.add(taskId);
        }
        const experiences = exps.filter((exp) => kept.has(exp.info.taskId));
        return {
          experiences,
          metrics: {
            filtered_count: exps.length - experiences.length,
            dropped_all_correct: allCorrect,
            dropped_all_wrong: allWrong,
          },
        };
      },
    };
  },
};
