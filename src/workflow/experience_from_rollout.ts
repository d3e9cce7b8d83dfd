/**
 * Builds the Experience of one sampled sequence of a task: a single-turn rollout (prompt then
 * response) or a multi-turn transcript with its own action mask, stamped with the task id, run
 * id, policy version and a fresh eid, then validated. Computes no reward (the reward fn does).
 */

import { type Experience, newEid, validateExperience } from "../buffer/experience.ts";
import type { Task } from "../buffer/task.ts";
import type { Rollout } from "./rollout_model.ts";

/** A token sequence with its per-token action mask and log-probs, as a workflow sampled it. */
export interface SampledSequence {
  /** Prompt then everything after it. */
  tokens: number[];
  promptLength: number;
  /** 1 on tokens the policy generated, 0 on prompt and environment tokens. */
  actionMask: number[];
  /** The generating policy's log-prob of each token; 0 where `actionMask` is 0. */
  logprobs: number[];
  /** The (oldest) policy version that generated it. */
  policyVersion: number;
  promptText?: string;
  responseText?: string;
}

/** Optional parts of an experience built from a rollout. */
export interface RolloutExtras {
  /** Numbers for logging (a reward fn's metrics). */
  metrics?: Record<string, number>;
  /** The prompt as text, for logs. */
  promptText?: string;
}

/**
 * The experience of `rollout`, sample `runId` of `task`: tokens are the prompt then the
 * response, the action mask is 1 on the response, log-probs are 0 on the prompt; `truncated`
 * when the rollout stopped at its length limit.
 *
 * @example
 * ```ts
 * const exps = rollouts.map((r, i) => experienceFromRollout(task, i, r, 1, { metrics }));
 * ```
 */
export function experienceFromRollout(
  task: Task,
  runId: number,
  rollout: Rollout,
  reward: number | null,
  { metrics, promptText }: RolloutExtras = {},
): Experience {
  const { promptTokens, responseTokens } = rollout;
  const sequence: SampledSequence = {
    tokens: [...promptTokens, ...responseTokens],
    promptLength: promptTokens.length,
    actionMask: [...promptTokens.map(() => 0), ...responseTokens.map(() => 1)],
    logprobs: [...promptTokens.map(() => 0), ...rollout.logprobs],
    policyVersion: rollout.policyVersion,
    promptText,
    responseText: rollout.text,
  };
  const exp = experienceFromSequence(task, runId, sequence, reward, metrics);
  return rollout.finishReason === "length" ? { ...exp, truncated: true } : exp;
}

/**
 * The experience of `sequence`, sample `runId` of `task`, with `reward` and `metrics`; `isEval`
 * comes from the task. Throws naming the task and run when the sequence is inconsistent.
 */
export function experienceFromSequence(
  task: Task,
  runId: number,
  sequence: SampledSequence,
  reward: number | null,
  metrics?: Record<string, number>,
): Experience {
  const { policyVersion, promptText, responseText, ...tokens } = sequence;
  const exp: Experience = {
    ...tokens,
    reward,
    info: { taskId: task.taskId, runId, policyVersion, eid: newEid(task.taskId, runId) },
    isEval: task.isEval,
    ...(metrics === undefined ? {} : { metrics }),
    ...(promptText === undefined ? {} : { promptText }),
    ...(responseText === undefined ? {} : { responseText }),
  };
  return validateExperience(exp, `of task "${task.taskId}" run ${runId}`);
}
