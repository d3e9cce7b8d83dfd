/**
 * A multi-turn episode as one token sequence: the model acts (its tokens and log-probs are
 * kept with action mask 1), the environment replies (user turns or tool results, rendered by
 * the chat template after the model's turn and appended with mask 0), and the whole transcript
 * becomes one experience. The model's turns are never re-rendered or re-tokenised: only the
 * text a template writes after a turn is added (see `assistantTurnEnd`). Knows no environment:
 * a workflow decides what to reply and when to stop (see `workflows/guess_number.ts`).
 */

import type { Experience } from "../buffer/experience.ts";
import type { Task } from "../buffer/task.ts";
import { assistantTurnEnd, type ChatMessage, type ChatOptions } from "../model/chat_template.ts";
import { experienceFromSequence, type SampledSequence } from "./experience_from_rollout.ts";
import type { Rollout, RolloutModel, RolloutOptions } from "./rollout_model.ts";

/** A conversation with the model kept as the running token list the model sees. */
export class Episode {
  readonly #model: RolloutModel;
  readonly #prompt: string | readonly ChatMessage[];
  readonly #options: RolloutOptions;
  readonly #template: Omit<ChatOptions, "addGenerationPrompt">;
  /** A chat episode's conversation so far (the model's turns as text). */
  readonly #messages: ChatMessage[];
  #last?: Rollout;
  readonly #sequence: SampledSequence = {
    tokens: [],
    promptLength: 0,
    actionMask: [],
    logprobs: [],
    policyVersion: Infinity,
  };
  #turns = 0;

  /**
   * An episode opening with `prompt`: a chat (sent through the model's chat template with
   * `template`'s tools and variables; the environment's replies are rendered as its turns) or a
   * text (sent as is, and replies are plain lines). `options` are the sampling options of every
   * turn (`n` is always 1).
   */
  constructor(
    model: RolloutModel,
    prompt: string | readonly ChatMessage[],
    options: RolloutOptions = {},
    template: Omit<ChatOptions, "addGenerationPrompt"> = {},
  ) {
    this.#model = model;
    this.#prompt = prompt;
    this.#options = { ...options, n: 1 };
    this.#template = template;
    this.#messages = typeof prompt === "string" ? [] : [...prompt];
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
      : await this.#model.chat(this.#prompt, this.#options, this.#template);
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
    this.#last = rollout;
    this.#messages.push({ role: "assistant", content: rollout.text });
    return rollout;
  }

  /** Appends the environment's reply `content` (a user turn in a chat, else a line). */
  observe(content: string): void {
    if (typeof this.#prompt === "string") {
      this.#append(this.#model.tokenizer.encode(`\n${content}\n`), 0);
    } else this.observeMessages([{ role: "user", content }]);
  }

  /**
   * Appends the results of the model's tool calls (chat episodes), in call order: each a
   * `tool` turn answering `tool_call_id` when given.
   */
  observeToolResults(results: readonly { content: string; tool_call_id?: string }[]): void {
    this.observeMessages(results.map((r) => ({ role: "tool", ...r })));
  }

  /**
   * Appends `messages` (user turns, tool results) after the model's last turn, as the chat
   * template writes them there, with the next turn's generation prompt; the model's own tokens
   * stay as sampled (its stop token is the turn's end when the template ends turns with it).
   */
  observeMessages(messages: readonly ChatMessage[]): void {
    const last = this.#last;
    if (typeof this.#prompt === "string" || !last) {
      throw new Error("Cannot observe chat messages: the episode is not a chat after a model turn");
    }
    const tokenizer = this.#model.tokenizer;
    const render = tokenizer.applyChatTemplate.bind(tokenizer);
    let text = assistantTurnEnd(render, this.#messages, messages, this.#template);
    const stopText = last.finishReason === "stop"
      ? tokenizer.decode(last.responseTokens.slice(-1))
      : "";
    if (stopText !== "" && text.startsWith(stopText)) text = text.slice(stopText.length);
    this.#messages.push(...messages);
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
