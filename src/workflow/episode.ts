/**
 * A multi-turn episode as one token sequence: the model acts (its tokens and log-probs are
 * kept with action mask 1), the environment replies (its text is tokenized and appended with
 * mask 0), and the whole transcript becomes one experience. Knows no environment: a workflow
 * decides what to reply and when to stop (see `workflows/guess_number.ts`).
 */

import type { Experience } from "../buffer/experience.ts";
import type { Task } from "../buffer/task.ts";
import type { ChatMessage } from "../model/chat_template.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import { experienceFromSequence, type SampledSequence } from "./experience_from_rollout.ts";
import type { Rollout, RolloutModel, RolloutOptions } from "./rollout_model.ts";

/** A conversation with the model kept as the running token list the model sees. */
export class Episode {
  readonly #model: RolloutModel;
  readonly #prompt: string | readonly ChatMessage[];
  readonly #options: RolloutOptions;
  readonly #sequence: SampledSequence = {
    tokens: [],
    promptLength: 0,
    actionMask: [],
    logprobs: [],
    policyVersion: Infinity,
  };
  #turns = 0;

  /**
   * An episode opening with `prompt`: a chat (sent through the model's chat template, and the
   * environment's replies are rendered as user turns) or a text (sent as is, and replies are
   * plain lines). `options` are the sampling options of every turn (`n` is always 1).
   */
  constructor(
    model: RolloutModel,
    prompt: string | readonly ChatMessage[],
    options: RolloutOptions = {},
  ) {
    this.#model = model;
    this.#prompt = prompt;
    this.#options = { ...options, n: 1 };
  }

  /** Model turns taken so far. */
  get turns(): number {
    return this.#turns;
  }

  /**
   * The model's next turn, appended to the transcript. Throws when the model truncated the
   * transcript (it outgrew the run's `max_prompt_tokens`).
   */
  async act(): Promise<Rollout> {
    const seq = this.#sequence;
    const [rollout] = this.#turns > 0
      ? await this.#model.generate(seq.tokens, this.#options)
      : typeof this.#prompt === "string"
      ? await this.#model.generate(this.#prompt, this.#options)
      : await this.#model.chat(this.#prompt, this.#options);
    if (this.#turns === 0) {
      this.#append(rollout.promptTokens, 0);
      seq.promptLength = rollout.promptTokens.length;
    } else if (rollout.promptTokens.length !== seq.tokens.length) {
      throw new Error(
        `Cannot continue the episode at turn ${
          this.#turns + 1
        }: the model kept ${rollout.promptTokens.length} of its ${seq.tokens.length} tokens (max_prompt_tokens); lower max_turns or raise max_prompt_tokens`,
      );
    }
    this.#append(rollout.responseTokens, 1, rollout.logprobs);
    seq.policyVersion = Math.min(seq.policyVersion, rollout.policyVersion);
    this.#turns++;
    return rollout;
  }

  /** Appends the environment's reply `content` (a user turn in a chat, else a line). */
  observe(content: string): void {
    const tokenizer = this.#model.tokenizer;
    const text = typeof this.#prompt === "string"
      ? `\n${content}\n`
      : userTurnText(tokenizer, content);
    this.#append(tokenizer.encode(text), 0);
  }

  /** The transcript as sample `runId` of `task`, with `reward` and `metrics`. */
  toExperience(
    task: Task,
    runId: number,
    reward: number | null,
    metrics?: Record<string, number>,
  ): Experience {
    const seq = this.#sequence;
    const decode = (ids: number[]) => this.#model.tokenizer.decode(ids);
    return experienceFromSequence(
      task,
      runId,
      {
        ...seq,
        promptText: decode(seq.tokens.slice(0, seq.promptLength)),
        responseText: decode(seq.tokens.slice(seq.promptLength)),
      },
      reward,
      metrics,
    );
  }

  #append(tokens: readonly number[], mask: 0 | 1, logprobs?: readonly number[]): void {
    const seq = this.#sequence;
    seq.tokens.push(...tokens);
    seq.actionMask.push(...tokens.map(() => mask));
    seq.logprobs.push(...(logprobs ?? tokens.map(() => 0)));
  }
}

/**
 * The text a chat template adds for a user turn `content` after an assistant turn, with the
 * generation prompt of the next assistant turn: the difference between rendering a short chat
 * with and without that user turn. Text a template puts after an assistant turn's end token
 * (e.g. a newline) belongs to the shorter chat, so it is not in the reply. Throws when the
 * template does not render the longer chat as a continuation of the shorter one.
 */
export function userTurnText(tokenizer: Tokenizer, content: string): string {
  const before: ChatMessage[] = [
    { role: "user", content: "?" },
    { role: "assistant", content: "?" },
  ];
  const base = tokenizer.applyChatTemplate(before);
  const full = tokenizer.applyChatTemplate([...before, { role: "user", content }], {
    addGenerationPrompt: true,
  });
  if (!full.startsWith(base)) {
    throw new Error(
      "Cannot render an environment reply as a user turn: the chat template does not render a longer chat as a continuation of a shorter one",
    );
  }
  return full.slice(base.length);
}
