/**
 * Step-wise GRPO advantages (Trinity's `step_wise_grpo`, the default of `multi_step_grpo`, after
 * rLLM): a multi-step rollout gives one experience per model call; each run's last experience
 * carries the outcome reward. Within a task, the last steps' rewards are normalised as GRPO
 * does (minus the group mean, divided by the group's std, or the std of every run's last
 * reward in the step with `std_cal_level: "batch"`, + `epsilon`) and each run's score is
 * broadcast to all its experiences (divided by the run's length with `enable_step_norm`).
 * Groups whose std is <= `std_threshold` (or of one run, when a threshold is set) are skipped.
 * Experiences of a run share its `runId`; the last in input order is its last step. A task
 * with one run and no threshold gets mean 0 and std 1, as in Trinity.
 */

import { type Args, checkChoice } from "../../util/registry.ts";
import type { AdvantageFn, AdvantageSample } from "./advantage_fn.ts";
import { broadcastScores, groupIndices, mean, std } from "./advantage_fn.ts";

/** The sample indices of each run of a task's `members`, in order of first appearance. */
function runsOf(samples: readonly AdvantageSample[], members: readonly number[]): number[][] {
  const runs = new Map<number | string, number[]>();
  for (const i of members) {
    const key = samples[i].runId ?? `sample ${i}`;
    const run = runs.get(key);
    if (run) run.push(i);
    else runs.set(key, [i]);
  }
  return [...runs.values()];
}

function stepWiseScores(samples: readonly AdvantageSample[], args: Args) {
  const level = checkChoice('advantage fn "step_wise_grpo"', "std_cal_level", args.std_cal_level, [
    "group",
    "batch",
  ]);
  const epsilon = args.epsilon as number;
  const threshold = args.std_threshold as number | null;
  const tasks = [...groupIndices(samples).values()].map((members) => runsOf(samples, members));
  const lastReward = (run: number[]) => samples[run.at(-1)!].reward as number;
  const allLast = tasks.flatMap((runs) => runs.map(lastReward));
  const batchStd = allLast.length <= 1 ? 1 : std(allLast);
  const scores: (number | null)[] = samples.map(() => null);
  let skippedGroups = 0;
  for (const runs of tasks) {
    const rewards = runs.map(lastReward);
    const [m, s] = rewards.length === 1 ? [0, 1] : [mean(rewards), std(rewards)];
    if (threshold !== null && (rewards.length === 1 || s <= threshold)) {
      skippedGroups++;
      continue;
    }
    runs.forEach((run, k) => {
      const score = (rewards[k] - m) / ((level === "batch" ? batchStd : s) + epsilon);
      for (const i of run) scores[i] = args.enable_step_norm ? score / run.length : score;
    });
  }
  return broadcastScores(samples, scores, {
    reward_mean: mean(allLast),
    skipped_group_ratio: tasks.length ? skippedGroups / tasks.length : 0,
  });
}

/** Step-wise GRPO, computed in the experience pipeline. */
export const stepWiseGrpoAdvantage: AdvantageFn = {
  defaultArgs: {
    epsilon: 1e-6,
    enable_step_norm: false,
    std_cal_level: "group",
    std_threshold: null,
  },
  computeInTrainer: false,
  compute: stepWiseScores,
};
