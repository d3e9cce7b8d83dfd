/**
 * The metric names the console line and the plot know by name. The run loop logs under these;
 * any other key is still written to metrics.jsonl and TensorBoard, just not singled out.
 */

/** Well-known metric keys (flat, `/`-separated, as in metrics.jsonl). */
export const METRIC = {
  reward: "rollout/reward_mean",
  responseLength: "rollout/response_length_mean",
  loss: "actor/loss",
  kl: "actor/kl",
  entropy: "actor/entropy",
  tokensPerSecond: "rollout/tokens_per_s",
  staleness: "buffer/staleness_mean",
} as const;

/**
 * Per-episode metrics of agent workflows (means over a step's episodes), charted together when
 * a workflow reports them: model turns, tool calls, invalid tool calls.
 */
export const EPISODE_METRICS: readonly string[] = [
  "rollout/turns",
  "rollout/tool_calls",
  "rollout/invalid_tool_calls",
];

/** Tokens per episode: trained (action mask 1) and masked (mask 0), when a workflow reports them. */
export const EPISODE_TOKEN_METRICS: readonly string[] = [
  "rollout/trained_tokens",
  "rollout/masked_tokens",
];

/** The key of a taskset's eval accuracy: `eval/<taskset>/accuracy`. */
export function evalAccuracyKey(taskset: string): string {
  return `eval/${taskset}/accuracy`;
}

/** Eval accuracy keys (`eval/<taskset>/accuracy`, or `.../success` as agent workflows call it). */
export const EVAL_ACCURACY: RegExp = /^eval\/(.+)\/(?:accuracy|success)$/;

/** The taskset of an eval accuracy key, or undefined for any other key. */
export function evalAccuracyTaskset(key: string): string | undefined {
  return EVAL_ACCURACY.exec(key)?.[1];
}

/**
 * Task-selection metrics (`buffer/taskset_scheduler.ts`), by what they hold: each taskset's pass
 * rate per step (`tasks/<taskset>/pass_rate`), the quantiles of the drawn tasks' features and
 * estimated pass rates (`tasks/<taskset>/selected_<feature>_{mean,p10,p50,p90}`), and the count
 * of graduated tasksets (`tasks/graduated`). The capture is the chart label.
 */
export const TASK_METRIC = {
  passRate: /^tasks\/(.+)\/pass_rate$/,
  selected: /^tasks\/(.+\/selected_.+)$/,
  graduated: /^(tasks\/graduated)$/,
} as const;
