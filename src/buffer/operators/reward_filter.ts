/**
 * `reward_filter`: keeps the experiences whose reward is at least `threshold` (Trinity's
 * example operator). A null reward is below every threshold and is dropped.
 */

import type { OperatorFactory } from "./operator.ts";

/** Keeps `reward >= threshold` (default 0); metric `filtered_count`. */
export const rewardFilter: OperatorFactory = {
  defaultArgs: { threshold: 0 },
  create(name, args) {
    const threshold = args.threshold as number;
    return {
      name,
      process(exps) {
        const experiences = exps.filter((exp) => exp.reward !== null && exp.reward >= threshold);
        return { experiences, metrics: { filtered_count: exps.length - experiences.length } };
      },
    };
  },
};
