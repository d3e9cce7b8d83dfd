/**
 * A model as the OpenAI-compatible server serves it: a {@link PolicyRolloutModel} (so requests
 * share its generation batches with everything else that samples from it, and carry its policy
 * version) with the server's limits. Turns a checked request into samples: applies the chat
 * template, encodes, refuses prompts beyond the limit (no silent truncation), ends samples at
 * stop texts (one-token texts stop the engine; longer ones cut the sample where they appear),
 * and adds top log-probs on request. Knows nothing of HTTP or JSON shapes.
 */

import type { Tokenizer } from "../model/tokenizer.ts";
import type { PolicyRolloutModel } from "../workflow/policy_rollout_model.ts";
import type { RecordedCall } from "../workflow/recorded_conversation.ts";
import type { Rollout } from "../workflow/rollout_model.ts";
import { ApiError, badRequest } from "./api_error.ts";
import type { CompletionRequest, RequestLimits } from "./completion_request.ts";
import { type TokenLogprob, TopLogprobs } from "./top_logprobs.ts";

/** Default most samples per prompt a request may ask for. */
export const DEFAULT_MAX_N = 16;

/** One generated sample of a completion. */
export interface CompletionChoice {
  /** Index of the prompt it continues (text completions may have several). */
  promptIndex: number;
  /** Generated ids (a stop token, if one ended the sample, is the last). */
  tokens: number[];
  /** log p of each token under the sampling temperature (1 when greedy). */
  logprobs: number[];
  /** Per token, the most likely alternatives (when the request asked for them). */
  topLogprobs?: TokenLogprob[][];
  /** The text returned to the client (without the stop text). */
  text: string;
  finishReason: "stop" | "length";
}

/** The samples of a request. */
export interface Completion {
  /** Prompt token ids, one list per prompt. */
  prompts: number[][];
  /** Samples in OpenAI's order: prompt 0's n samples, then prompt 1's, ... */
  choices: CompletionChoice[];
  policyVersion: number;
}

/** A model the server answers requests with. */
export class ServedModel {
  readonly #topLogprobs: TopLogprobs;

  /**
   * `id`: the name clients pass as `model`; `maxN`: most samples per prompt; `trained`: calls
   * may be recorded as training data (the policy of a run; not auxiliary models).
   */
  constructor(
    readonly id: string,
    readonly rollout: PolicyRolloutModel,
    readonly maxN: number = DEFAULT_MAX_N,
    readonly trained = false,
  ) {
    this.#topLogprobs = new TopLogprobs(rollout.model);
  }

  /** The request limits of this model. */
  get limits(): RequestLimits {
    return { maxN: this.maxN, maxTokens: this.rollout.options.maxResponseTokens };
  }

  get #tokenizer(): Tokenizer {
    return this.rollout.tokenizer;
  }

  /** Samples `request` (checked against {@link limits} by its parser). */
  async complete(request: CompletionRequest): Promise<Completion> {
    const prompts = request.kind === "chat"
      ? [this.#chatPrompt(request)]
      : request.prompts.map((p, i) =>
        this.#textPrompt(p, request.prompts.length > 1 ? `prompt[${i}]` : "prompt")
      );
    const textStops = request.stop.filter((s) => !isOneToken(this.#tokenizer, s));
    const options = {
      n: request.n,
      temperature: request.temperature,
      topP: request.topP,
      topK: request.topK,
      maxTokens: request.maxTokens,
      stop: request.stop.filter((s) => isOneToken(this.#tokenizer, s)),
      seed: request.seed,
    };
    const results = await Promise.all(prompts.map((p) => this.rollout.generate(p, options)));
    const temperature = request.temperature ?? this.rollout.options.defaults.temperature;
    const choices: CompletionChoice[] = [];
    for (const [promptIndex, rollouts] of results.entries()) {
      for (const rollout of rollouts) {
        const choice = { promptIndex, ...cutAtStopText(this.#tokenizer, rollout, textStops) };
        if (request.topLogprobs > 0) {
          choice.topLogprobs = await this.#topLogprobs.compute(
            prompts[promptIndex],
            choice.tokens,
            request.topLogprobs,
            temperature > 0 ? temperature : 1,
          );
        }
        choices.push(choice);
      }
    }
    return {
      prompts,
      choices,
      policyVersion: Math.min(...results.flat().map((r) => r.policyVersion)),
    };
  }

  /** The call as a workflow's recorded conversation keeps it (chat: one prompt). */
  recordedCall(completion: Completion): RecordedCall {
    return {
      promptTokens: completion.prompts[0],
      samples: completion.choices.map((c) => ({
        responseTokens: c.tokens,
        logprobs: c.logprobs,
        text: c.text,
        finishReason: c.finishReason,
      })),
      policyVersion: completion.policyVersion,
    };
  }

  /** Frees the graphs this server added (not the rollout model or the weights). */
  destroy(): void {
    this.#topLogprobs.destroy();
  }

  #chatPrompt(request: CompletionRequest): number[] {
    let text: string;
    try {
      text = this.#tokenizer.applyChatTemplate(request.messages, { addGenerationPrompt: true });
    } catch (err) {
      throw badRequest("messages", (err as Error).message);
    }
    return this.#checkLength(this.#encode(text, "messages"), "messages");
  }

  #textPrompt(prompt: string | number[], param: string): number[] {
    if (typeof prompt === "string") return this.#checkLength(this.#encode(prompt, param), param);
    const vocab = this.rollout.model.config.vocabSize;
    const bad = prompt.find((id) => id >= vocab);
    if (bad !== undefined) {
      throw badRequest(
        param,
        `Cannot read "${param}": token id ${bad} is outside the vocabulary of ${vocab} ids`,
      );
    }
    return this.#checkLength(prompt, param);
  }

  /** `text` as token ids; text the tokenizer cannot encode is the client's error. */
  #encode(text: string, param: string): number[] {
    try {
      return this.#tokenizer.encode(text);
    } catch (err) {
      throw badRequest(param, (err as Error).message);
    }
  }

  #checkLength(ids: number[], param: string): number[] {
    const limit = this.rollout.options.maxPromptTokens;
    if (ids.length === 0) {
      throw badRequest(param, `Cannot complete "${param}": the prompt is empty`);
    }
    if (ids.length > limit) {
      throw new ApiError(
        400,
        `Cannot complete "${param}": the prompt has ${ids.length} tokens; this server accepts at most ${limit}`,
        "invalid_request_error",
        param,
        "context_length_exceeded",
      );
    }
    return ids;
  }
}

/** Whether `text` is one token of `tokenizer` (such stop texts end samples in the engine). */
function isOneToken(tokenizer: Tokenizer, text: string): boolean {
  return tokenizer.tokenToId(text) !== undefined || tokenizer.encode(text).length === 1;
}

/**
 * `rollout` as a choice, cut at the first of `stops` its text contains: the tokens up to the
 * one that completes the stop text are kept (as a stop token would be), the text ends before it.
 */
function cutAtStopText(
  tokenizer: Tokenizer,
  rollout: Rollout,
  stops: readonly string[],
): Omit<CompletionChoice, "promptIndex"> {
  const whole = {
    tokens: rollout.responseTokens,
    logprobs: rollout.logprobs,
    text: rollout.text,
    finishReason: rollout.finishReason,
  };
  const firstStop = (text: string) =>
    Math.min(...stops.map((s) => text.indexOf(s)).filter((i) => i >= 0));
  const at = firstStop(rollout.text);
  if (!Number.isFinite(at)) return whole;
  for (let count = 1; count <= rollout.responseTokens.length; count++) {
    const text = tokenizer.decode(rollout.responseTokens.slice(0, count));
    const end = firstStop(text);
    if (Number.isFinite(end)) {
      return {
        tokens: rollout.responseTokens.slice(0, count),
        logprobs: rollout.logprobs.slice(0, count),
        text: text.slice(0, end),
        finishReason: "stop",
      };
    }
  }
  return whole;
}
