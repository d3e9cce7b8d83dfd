/**
 * The charts of a run's page, in order, and which of a run's metric keys each draws: reward
 * (mean, with the ± std spread as a band), evaluations per taskset, loss, KL (to the reference
 * and PPO's old-to-new), entropy, gradient norm, clip fractions, learning rate, response length,
 * throughput, staleness, an agent's episodes, and task selection. A chart appears only for
 * metrics the run has, and the task-selection ones only where they say something the others do
 * not: pass rates of two tasksets or more (one taskset's pass rate is the reward), graduations
 * when some taskset graduated.
 */

import {
  EPISODE_METRICS,
  EPISODE_TOKEN_METRICS,
  EVAL_ACCURACY,
  METRIC,
  TASK_METRIC,
} from "./metric_keys.ts";

/** A chart: its title, and its series as [key, label] pairs, or a pattern labelled by capture. */
export interface PanelSpec {
  title: string;
  series: readonly (readonly [string, string])[] | RegExp;
  /**
   * The series drawn with a band of mean ± std (its keys), kept within the logged min and max
   * where the run has them (a 0/1 reward's spread does not pass 1).
   */
  band?: BandKeys;
  /** Draw only when the found series and their values pass (default: any value). */
  show?: (found: readonly FoundSeries[]) => boolean;
}

/** The keys of a spread band: mean and std, and the bounds that clip it when logged. */
export interface BandKeys {
  mean: string;
  std: string;
  min?: string;
  max?: string;
}

/** A series a panel found in the run: its key, label and non-null values. */
export interface FoundSeries {
  key: string;
  label: string;
  values: readonly number[];
}

/** Every chart the page knows, in page order. */
export const PANELS: readonly PanelSpec[] = [
  {
    title: "Reward",
    series: [[METRIC.reward, "mean"]],
    band: {
      mean: METRIC.reward,
      std: "rollout/reward_std",
      min: "rollout/reward_min",
      max: "rollout/reward_max",
    },
  },
  { title: "Evaluation (accuracy per taskset)", series: EVAL_ACCURACY },
  { title: "Loss", series: [[METRIC.loss, "policy"], ["critic/vf_loss", "critic (value)"]] },
  {
    title: "KL",
    series: [[METRIC.kl, "to the reference (actor/kl)"], [
      "actor/ppo_kl",
      "old to new policy (actor/ppo_kl)",
    ]],
  },
  { title: "Entropy", series: [[METRIC.entropy, "actor/entropy"]] },
  {
    title: "Gradient norm (before clipping)",
    series: [["actor/grad_norm", "actor"], ["critic/grad_norm", "critic"]],
  },
  {
    title: "Clip fraction",
    series: [
      ["actor/pg_clipfrac", "actor/pg_clipfrac"],
      ["actor/pg_clipfrac_lower", "actor/pg_clipfrac_lower"],
      ["critic/vf_clipfrac", "critic/vf_clipfrac"],
    ],
  },
  { title: "Learning rate", series: [["actor/lr", "actor"], ["critic/lr", "critic"]] },
  {
    title: "Response length (tokens)",
    series: [[METRIC.responseLength, "mean"], ["rollout/response_length_max", "max"]],
  },
  {
    title: "Throughput (tokens/s)",
    series: [[METRIC.tokensPerSecond, "generation"], ["actor/tokens_per_s", "training"]],
  },
  {
    title: "Staleness (policy versions)",
    series: [[METRIC.staleness, "mean"]],
    show: (found) => found.some((s) => s.values.some((v) => v !== 0)),
  },
  { title: "Agent episodes (mean per episode)", series: labelled(EPISODE_METRICS) },
  { title: "Episode tokens: trained vs masked", series: labelled(EPISODE_TOKEN_METRICS) },
  {
    title: "Task pass rate per taskset",
    series: TASK_METRIC.passRate,
    show: (found) => found.length >= 2,
  },
  { title: "Selected tasks", series: TASK_METRIC.selected },
  {
    title: "Tasksets graduated",
    series: TASK_METRIC.graduated,
    show: (found) => found.some((s) => s.values.some((v) => v !== 0)),
  },
];

function labelled(keys: readonly string[]): [string, string][] {
  return keys.map((key) => [key, key]);
}

/** The [key, label] pairs of `panel` among the run's `keys` (sorted for patterns). */
export function panelSeries(panel: PanelSpec, keys: readonly string[]): [string, string][] {
  if (Array.isArray(panel.series)) {
    const present = new Set(keys);
    return (panel.series as [string, string][]).filter(([key]) => present.has(key));
  }
  const pattern = panel.series as RegExp;
  return [...keys].sort().flatMap((key) => {
    const label = pattern.exec(key)?.[1];
    return label === undefined ? [] : [[key, label] as [string, string]];
  });
}
