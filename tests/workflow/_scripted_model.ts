/**
 * Test helpers of the workflow tests: a scripted `RolloutModel` that answers with predetermined
 * texts (tokenized by a real char tokenizer, ending in eos, with known log-probs) and records
 * every call, and a task builder.
 */

import type { Task } from "../../src/buffer/task.ts";
import { CharTokenizer } from "../../src/model/char_tokenizer.ts";
import type { ChatMessage, ChatOptions } from "../../src/model/chat_template.ts";
import type { Tokenizer } from "../../src/model/tokenizer.ts";
import type { Rollout, RolloutModel, RolloutOptions } from "../../src/workflow/rollout_model.ts";

/**
 * A char tokenizer over printable ASCII, newline, tab, `√` and `–` (the games' boards), with
 * `<pad>`, `<bos>`, `<eos>`.
 */
export const TOKENIZER: CharTokenizer = new CharTokenizer(
  "\n" + Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join("") + "\t√–",
);

/** The scripted log-prob of the `i`-th token of a response. */
export function scriptedLogprob(i: number): number {
  return -(i + 1) / 16;
}

/** One call the scripted model received. */
export interface ScriptedCall {
  kind: "generate" | "chat";
  /** The prompt as the model saw it. */
  promptTokens: number[];
  options: RolloutOptions;
}

/**
 * Answers each sample with the next text of its script (throws when the script runs out), or
 * with what a reply function gives for the prompt text and the sample's number in the call.
 */
export class ScriptedModel implements RolloutModel {
  /** Stamped on every rollout; tests change it between calls. */
  policyVersion = 0;
  readonly calls: ScriptedCall[] = [];
  readonly #replies: string[] | ((prompt: string, sample: number) => string);

  /** Answers with `replies`, tokenized by `tokenizer` (default {@link TOKENIZER}). */
  constructor(
    replies: readonly string[] | ((prompt: string, sample: number) => string),
    readonly tokenizer: Tokenizer = TOKENIZER,
  ) {
    this.#replies = typeof replies === "function" ? replies : [...replies];
  }

  generate(prompt: string | readonly number[], options: RolloutOptions = {}): Promise<Rollout[]> {
    const tokens = typeof prompt === "string" ? this.tokenizer.encode(prompt) : [...prompt];
    return this.#sample("generate", tokens, options);
  }

  chat(
    messages: readonly ChatMessage[],
    options: RolloutOptions = {},
    template: Omit<ChatOptions, "addGenerationPrompt"> = {},
  ): Promise<Rollout[]> {
    const text = this.tokenizer.applyChatTemplate(messages, {
      ...template,
      addGenerationPrompt: true,
    });
    return this.#sample("chat", this.tokenizer.encode(text), options);
  }

  #sample(kind: ScriptedCall["kind"], promptTokens: number[], options: RolloutOptions) {
    this.calls.push({ kind, promptTokens, options });
    const replies = this.#replies;
    return Promise.resolve(Array.from({ length: options.n ?? 1 }, (_, sample): Rollout => {
      const text = typeof replies === "function"
        ? replies(this.tokenizer.decode(promptTokens), sample)
        : replies.shift();
      if (text === undefined) throw new Error("The scripted model ran out of replies");
      const responseTokens = [...this.tokenizer.encode(text), this.tokenizer.eosId!];
      return {
        promptTokens,
        responseTokens,
        logprobs: responseTokens.map((_, i) => scriptedLogprob(i)),
        text,
        finishReason: "stop",
        policyVersion: this.policyVersion,
      };
    }));
  }
}

/** A task of draw "0.3" with `rawTask`, format `question`/`answer`, n = 1; `overrides` win. */
export function makeTask(rawTask: Record<string, unknown>, overrides: Partial<Task> = {}): Task {
  return {
    taskId: "0.3",
    index: 3,
    epoch: 0,
    workflow: "simple_workflow",
    rawTask,
    formatArgs: { promptKey: "question", responseKey: "answer" },
    rolloutArgs: { n: 1 },
    workflowArgs: {},
    isEval: false,
    ...overrides,
  };
}
