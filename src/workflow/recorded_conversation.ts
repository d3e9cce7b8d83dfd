/**
 * The calls a workflow made to the policy through the OpenAI-compatible server, as the server
 * saw them (prompt token ids after the chat template, sampled token ids and their log-probs),
 * turned into training sequences: a call whose prompt continues an earlier call's prompt and
 * response token for token extends that sequence (the new prompt tokens with action mask 0,
 * the response with mask 1), so a multi-turn agent conversation is one experience in which
 * only model-generated tokens are trained. A call that does not continue any earlier one
 * starts a sequence of its own. Knows nothing of HTTP.
 */

import type { Experience } from "../buffer/experience.ts";
import type { Task } from "../buffer/task.ts";
import { experienceFromSequence, type SampledSequence } from "./experience_from_rollout.ts";

/** One sample of a recorded call. */
export interface RecordedSample {
  /** Generated token ids (a stop token that ended the sample is the last). */
  responseTokens: number[];
  /** The generating policy's log-prob of each response token. */
  logprobs: number[];
  /** The text the client received. */
  text: string;
  finishReason: "stop" | "length";
}

/** One completion call as the server served it. */
export interface RecordedCall {
  /** The prompt as the model saw it (chat template applied), as token ids. */
  promptTokens: number[];
  samples: RecordedSample[];
  /** The policy version of the weights that generated the samples. */
  policyVersion: number;
}

/** The policy calls of one workflow episode, in the order they were served. */
export class RecordedConversation {
  readonly #calls: RecordedCall[] = [];

  /** Calls recorded so far. */
  get calls(): readonly RecordedCall[] {
    return this.#calls;
  }

  /** Appends a served call (the server calls this once the client has its answer). */
  record(call: RecordedCall): void {
    this.#calls.push(call);
  }

  /**
   * The conversation as token sequences: each call's samples extend the latest sequence their
   * prompt continues (a call with n > 1 samples forks it), or start a new one; sequences that
   * a later call extended are not returned on their own.
   */
  sequences(): SampledSequence[] {
    const open: SampledSequence[] = [];
    for (const call of this.#calls) {
      const parent = open.findLast((s) => startsWith(call.promptTokens, s.tokens));
      if (parent) open.splice(open.indexOf(parent), 1);
      for (const sample of call.samples) {
        const base: SampledSequence = parent
          ? {
            ...parent,
            tokens: [...parent.tokens],
            actionMask: [...parent.actionMask],
            logprobs: [...parent.logprobs],
          }
          : {
            tokens: [],
            promptLength: call.promptTokens.length,
            actionMask: [],
            logprobs: [],
            policyVersion: Infinity,
          };
        const context = call.promptTokens.slice(base.tokens.length);
        base.tokens.push(...context, ...sample.responseTokens);
        base.actionMask.push(...context.map(() => 0), ...sample.responseTokens.map(() => 1));
        base.logprobs.push(...context.map(() => 0), ...sample.logprobs);
        base.policyVersion = Math.min(base.policyVersion, call.policyVersion);
        open.push(base);
      }
    }
    return open;
  }

  /**
   * The experiences of the conversation, all sample `runId` of `task` with `reward` and
   * `metrics` (one per sequence, see {@link sequences}). Throws naming the task when the
   * workflow made no call through the conversation.
   */
  toExperiences(
    task: Task,
    runId: number,
    reward: number | null,
    metrics?: Record<string, number>,
  ): Experience[] {
    const sequences = this.sequences();
    if (sequences.length === 0) {
      throw new Error(
        `Cannot build experiences of task "${task.taskId}" run ${runId}: the workflow made no call through its OpenAI client`,
      );
    }
    return sequences.map((s) => experienceFromSequence(task, runId, s, reward, metrics));
  }
}

/** Whether `tokens` begins with all of `prefix`. */
function startsWith(tokens: readonly number[], prefix: readonly number[]): boolean {
  return prefix.length <= tokens.length && prefix.every((id, i) => tokens[i] === id);
}
