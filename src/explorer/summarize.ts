/**
 * Scalar summaries of a batch of experiences for logging: reward statistics, response lengths,
 * the mean of every per-experience metric the workflows report (e.g. `accuracy`), and for
 * groups of several samples of one task best@k (the share of tasks with an accurate sample).
 */

import type { Experience } from "../buffer/experience.ts";

/** Mean of `xs`; NaN when empty (logged as null). */
function mean(xs: readonly number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN;
}

/**
 * Metrics of `experiences` keyed `<prefix>/reward_mean`, `reward_std`, `reward_max`,
 * `reward_min`, `response_length_mean`, `count`, `<metric>` (the mean of each workflow metric)
 * and `best@k` when every task has k > 1 samples and `accuracy` is reported.
 */
export function summarizeExperiences(
  prefix: string,
  experiences: readonly Experience[],
): Record<string, number> {
  const rewards = experiences.map((e) => e.reward).filter((r): r is number => r !== null);
  const m = mean(rewards);
  const out: Record<string, number> = {
    [`${prefix}/count`]: experiences.length,
    [`${prefix}/reward_mean`]: m,
    [`${prefix}/reward_std`]: rewards.length > 1
      ? Math.sqrt(rewards.reduce((a, r) => a + (r - m) ** 2, 0) / (rewards.length - 1))
      : 0,
    [`${prefix}/reward_max`]: rewards.length ? Math.max(...rewards) : NaN,
    [`${prefix}/reward_min`]: rewards.length ? Math.min(...rewards) : NaN,
    [`${prefix}/response_length_mean`]: mean(
      experiences.map((e) => e.actionMask.reduce((a, b) => a + b, 0)),
    ),
  };
  const keys = new Set(experiences.flatMap((e) => Object.keys(e.metrics ?? {})));
  for (const key of keys) {
    out[`${prefix}/${key}`] = mean(
      experiences.map((e) => e.metrics?.[key]).filter((v): v is number => v !== undefined),
    );
  }
  const groups = new Map<string, Experience[]>();
  for (const e of experiences) groups.set(e.info.taskId, [...groups.get(e.info.taskId) ?? [], e]);
  const k = Math.min(...[...groups.values()].map((g) => g.length));
  if (keys.has("accuracy") && k > 1) {
    const solved = [...groups.values()].filter((g) =>
      g.some((e) => (e.metrics?.accuracy ?? 0) > 0)
    );
    out[`${prefix}/best@${k}`] = solved.length / groups.size;
  }
  return out;
}
