/**
 * The calls a workflow made to the policy through the OpenAI-compatible server, as the server
 * saw them (prompt token ids after the chat template, sampled token ids and their log-probs,
 * and for chat calls the messages sent and the reply returned), turned into training sequences.
 * A chat call whose history is an earlier call's messages followed by the reply it got
 * ({@link RecordedConversation.continued}) is prompted by the server with that call's exact
 * tokens, the sampled reply's exact tokens, then only the new turns rendered: a reply is never
 * re-tokenised, even when the template writes it differently (tool calls, thinking). So a call
 * whose prompt continues an earlier call's prompt and response token for token extends that
 * sequence (the new prompt tokens with action mask 0, the response with mask 1), and a
 * multi-turn agent conversation is one experience in which only model-generated tokens are
 * trained. A call that continues none starts a sequence of its own. Knows nothing of HTTP.
 */

import type { Experience } from "../buffer/experience.ts";
import type { Task } from "../buffer/task.ts";
import { type ChatMessage, normalizeMessages, type ToolCall } from "../model/chat_template.ts";
import { experienceFromSequence, type SampledSequence } from "./experience_from_rollout.ts";

/** The assistant message a chat call returned for one sample. */
export interface RecordedReply {
  content: string | null;
  tool_calls?: ToolCall[];
}

/** One sample of a recorded call. */
export interface RecordedSample {
  /** Generated token ids (a stop token that ended the sample is the last). */
  responseTokens: number[];
  /** The generating policy's log-prob of each response token. */
  logprobs: number[];
  /** The text the client received. */
  text: string;
  finishReason: "stop" | "length" | "tool_calls";
  /** Chat calls: the message the client received. */
  reply?: RecordedReply;
  /** Tool calls read from the reply, and call blocks left as text (malformed). */
  toolCalls?: number;
  malformedToolCalls?: number;
}

/** What shaped a chat call's prompt besides its messages (tools, template variables). */
export interface RecordedChat {
  messages: readonly ChatMessage[];
  /** Equal for calls rendered with the same tools and template variables. */
  context: string;
}

/** One completion call as the server served it. */
export interface RecordedCall {
  /** The prompt as the model saw it (chat template applied), as token ids. */
  promptTokens: number[];
  samples: RecordedSample[];
  /** The policy version of the weights that generated the samples. */
  policyVersion: number;
  /** Chat calls: the conversation sent. */
  chat?: RecordedChat;
}

/** A recorded sample a new chat call continues, found by {@link RecordedConversation.continued}. */
export interface Continuation {
  /** The earlier call's prompt then the sample's response: the new prompt starts with these. */
  tokens: number[];
  /** The new call's messages up to the continued reply (the rest are its new turns). */
  history: readonly ChatMessage[];
  sample: RecordedSample;
}

/** A sequence with the tool-call counts of the samples in it. */
interface CountedSequence extends SampledSequence {
  toolCalls: number;
  malformedToolCalls: number;
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
   * The latest recorded chat sample that `messages` (with the same `context`) continue: the
   * call's messages, then a message equal to the reply that sample returned, then more.
   */
  continued(messages: readonly ChatMessage[], context: string): Continuation | undefined {
    const wanted = normalizeMessages(messages).map(messageKey);
    for (const call of this.#calls.toReversed()) {
      const chat = call.chat;
      if (!chat || chat.context !== context || chat.messages.length + 1 >= wanted.length) continue;
      const sent = normalizeMessages(chat.messages).map(messageKey);
      if (!sent.every((key, i) => key === wanted[i])) continue;
      const sample = call.samples.find((s) => s.reply && replyKey(s.reply) === wanted[sent.length]);
      if (sample) {
        return {
          tokens: [...call.promptTokens, ...sample.responseTokens],
          history: messages.slice(0, sent.length + 1),
          sample,
        };
      }
    }
    return undefined;
  }

  /**
   * The conversation as token sequences: each call's samples extend the latest sequence their
   * prompt continues (a call with n > 1 samples forks it), or start a new one; sequences that
   * a later call extended are not returned on their own.
   */
  sequences(): SampledSequence[] {
    return this.#counted().map(({ toolCalls: _, malformedToolCalls: __, ...s }) => s);
  }

  /**
   * The experiences of the conversation, all sample `runId` of `task` with `reward` and
   * `metrics` (one per sequence, see {@link sequences}); chat replies add `tool_calls` and
   * `malformed_tool_calls` (the tool calls read from the sequence's replies, and call blocks
   * left as text). Throws naming the task when the workflow made no call through the
   * conversation.
   */
  toExperiences(
    task: Task,
    runId: number,
    reward: number | null,
    metrics?: Record<string, number>,
  ): Experience[] {
    const sequences = this.#counted();
    if (sequences.length === 0) {
      throw new Error(
        `Cannot build experiences of task "${task.taskId}" run ${runId}: the workflow made no call through its OpenAI client`,
      );
    }
    return sequences.map(({ toolCalls, malformedToolCalls, ...s }) => {
      const counts: Record<string, number> = this.#calls.some((c) => c.chat)
        ? { tool_calls: toolCalls, malformed_tool_calls: malformedToolCalls }
        : {};
      return experienceFromSequence(task, runId, s, reward, { ...counts, ...metrics });
    });
  }

  #counted(): CountedSequence[] {
    const open: CountedSequence[] = [];
    for (const call of this.#calls) {
      const parent = open.findLast((s) => startsWith(call.promptTokens, s.tokens));
      if (parent) open.splice(open.indexOf(parent), 1);
      for (const sample of call.samples) {
        const base: CountedSequence = parent
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
            toolCalls: 0,
            malformedToolCalls: 0,
          };
        const context = call.promptTokens.slice(base.tokens.length);
        base.tokens.push(...context, ...sample.responseTokens);
        base.actionMask.push(...context.map(() => 0), ...sample.responseTokens.map(() => 1));
        base.logprobs.push(...context.map(() => 0), ...sample.logprobs);
        base.policyVersion = Math.min(base.policyVersion, call.policyVersion);
        base.toolCalls += sample.toolCalls ?? 0;
        base.malformedToolCalls += sample.malformedToolCalls ?? 0;
        open.push(base);
      }
    }
    return open;
  }
}

/** Whether `tokens` begins with all of `prefix`. */
function startsWith(tokens: readonly number[], prefix: readonly number[]): boolean {
  return prefix.length <= tokens.length && prefix.every((id, i) => tokens[i] === id);
}

/** A normalised message as a comparable key (fields sorted; call arguments as parsed JSON). */
function messageKey(message: ChatMessage): string {
  const { role, content, name, tool_call_id, reasoning_content, tool_calls } = message;
  return JSON.stringify(sortKeys({
    role,
    content,
    name,
    tool_call_id,
    reasoning_content,
    tool_calls: tool_calls?.map((c) => ({ id: c.id, ...c.function })),
  }));
}

/** The key of a reply as the assistant message a client sends back. */
function replyKey(reply: RecordedReply): string {
  const message: ChatMessage = { role: "assistant", content: reply.content ?? "" };
  if (reply.tool_calls?.length) message.tool_calls = reply.tool_calls;
  return messageKey(normalizeMessages([message])[0]);
}

/** `value` with every object's keys sorted and undefined fields dropped. */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== "object" || value === null) return value;
  const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) =>
    a < b ? -1 : 1
  );
  return Object.fromEntries(entries.map(([k, v]) => [k, sortKeys(v)]));
}
