/**
 * `invalid_reward_filter`: drops experiences whose reward is null, NaN or infinite, e.g. from
 * a reward fn that did not apply or failed, before anything averages over rewards.
 */

import type { OperatorFactory } from "./operator.ts";

/** Keeps finite rewards; metric `filtered_count`. Takes no arguments. */
export const invalidRewardFilter: OperatorFactory = {
  defaultArgs: {},
  create(name) {
    return {
      name,
      process(exps) {
        const experiences = exps.filter((exp) => Number.isFinite(exp.reward));
        return { experiences, metrics: { filtered_count: exps.length - experiences.length } };
      },
    };
  },
};
