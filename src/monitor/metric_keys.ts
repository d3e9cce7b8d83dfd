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
  stepSeconds: "time/step_s",
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

/**
 * The taskset of an eval accuracy key (`eval/<taskset>/accuracy`, or `eval/<taskset>/success`
 * as agent workflows call it), or undefined for any other key.
 */
export function evalAccuracyTaskset(key: string): string | undefined {
  return /^eval\/(.+)\/(?:accuracy|success)$/.exec(key)?.[1];
}
