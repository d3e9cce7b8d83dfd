/**
 * The {@link RolloutModel} of a real policy: encodes prompts and chats with the policy's
 * tokenizer, applies the run's limits and sampling defaults, and sends every call through one
 * {@link GenerationBatcher}, so calls from concurrent workflow runners share engine batches.
 * Each rollout carries the policy version read when its batch started. Does not copy weights:
 * the synchronizer does, then calls `setPolicyVersion`.
 */

import { GenerationEngine, type GenerationRequest } from "../engine/engine.ts";
import { type BatcherStats, GenerationBatcher } from "../engine/generation_batcher.ts";
import type { ChatMessage, ChatOptions } from "../model/chat_template.ts";
import type { PolicyModel } from "../model/policy.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import { minTokensConstraint } from "../engine/min_tokens.ts";
import { mulberry32 } from "../util/random.ts";
import type { Rollout, RolloutModel, RolloutOptions } from "./rollout_model.ts";

/** Settings of a {@link PolicyRolloutModel} (the run's `model` section). */
export interface PolicyRolloutOptions {
  /** Longer prompts keep their last this many tokens. */
  maxPromptTokens: number;
  /** Cap of every call's `maxTokens` (and its default). */
  maxResponseTokens: number;
  /** Sampling settings of calls that do not give their own. */
  defaults: { temperature: number; topP: number; topK: number };
  /** Seed of the stream that gives a seed to each call without one. */
  seed: number;
  /** Most sample slots per engine batch (see {@link GenerationBatcher}). Default 64. */
  maxBatchSlots?: number;
  /** Chat template variables of every `chat` call, under the call's own (`enable_thinking`). */
  templateVariables?: Readonly<Record<string, unknown>>;
  /** Fewest tokens before a stop token may end a response (vLLM's `min_tokens`). Default 0. */
  minResponseTokens?: number;
}

/** A policy model as workflows see it, with concurrent calls merged into shared batches. */
export class PolicyRolloutModel implements RolloutModel {
  readonly tokenizer: Tokenizer;
  readonly #engine: GenerationEngine;
  readonly #batcher: GenerationBatcher;
  readonly #random: () => number;
  #policyVersion = 0;

  constructor(readonly model: PolicyModel, readonly options: PolicyRolloutOptions) {
    const fail = (detail: string): never => {
      throw new Error(`Cannot create a rollout model: ${detail}`);
    };
    const { maxPromptTokens, maxResponseTokens } = options;
    for (const [name, value] of Object.entries({ maxPromptTokens, maxResponseTokens })) {
      if (!Number.isInteger(value) || value < 1) {
        fail(`${name} must be an integer >= 1, received ${value}`);
      }
    }
    if (maxPromptTokens + maxResponseTokens > model.config.maxPositions) {
      fail(
        `maxPromptTokens ${maxPromptTokens} + maxResponseTokens ${maxResponseTokens} exceeds the model's ${model.config.maxPositions} positions`,
      );
    }
    this.tokenizer = model.tokenizer ?? fail("the policy model has no tokenizer");
    this.#engine = new GenerationEngine(model);
    this.#batcher = new GenerationBatcher(this.#engine, {
      maxBatchSlots: options.maxBatchSlots,
      policyVersion: () => this.#policyVersion,
    });
    this.#random = mulberry32(options.seed);
  }

  /** The version of the weights now used for new batches. */
  get policyVersion(): number {
    return this.#policyVersion;
  }

  /**
   * Stamps batches that start from now on with `version`; the synchronizer calls it once the
   * new weights are in place (holding `model.gpuLock` across the copy and this call keeps a
   * batch from starting in between).
   */
  setPolicyVersion(version: number): void {
    if (!Number.isInteger(version) || version < 0) {
      throw new Error(
        `Cannot set the policy version: expected an integer >= 0, received ${version}`,
      );
    }
    this.#policyVersion = version;
  }

  /** Engine batches run and requests they served. */
  get stats(): BatcherStats {
    return this.#batcher.stats;
  }

  generate(prompt: string | readonly number[], options: RolloutOptions = {}): Promise<Rollout[]> {
    return this.#sample(
      typeof prompt === "string" ? this.tokenizer.encode(prompt) : prompt,
      options,
    );
  }

  chat(
    messages: readonly ChatMessage[],
    options: RolloutOptions = {},
    template: Omit<ChatOptions, "addGenerationPrompt"> = {},
  ): Promise<Rollout[]> {
    const text = this.tokenizer.applyChatTemplate(messages, {
      ...template,
      variables: { ...this.options.templateVariables, ...template.variables },
      addGenerationPrompt: true,
    });
    return this.#sample(this.tokenizer.encode(text), options);
  }

  /** Frees the engine's caches and graphs (not the model); no call may be in flight. */
  destroy(): void {
    this.#engine.destroy();
  }

  /** {@link destroy}, for `using`. */
  [Symbol.dispose](): void {
    this.destroy();
  }

  async #sample(ids: readonly number[], options: RolloutOptions): Promise<Rollout[]> {
    const { defaults, maxPromptTokens, maxResponseTokens } = this.options;
    const promptTokens = ids.slice(-maxPromptTokens);
    const stop = [
      ...this.model.config.eosTokenIds,
      ...(options.stop ?? []).map((text) => stopTokenId(this.tokenizer, text)),
    ];
    const minTokens = this.options.minResponseTokens ?? 0;
    const request: GenerationRequest = {
      prompt: promptTokens,
      n: options.n ?? 1,
      temperature: options.temperature ?? defaults.temperature,
      topK: options.topK ?? defaults.topK,
      topP: options.topP ?? defaults.topP,
      maxTokens: Math.min(options.maxTokens ?? maxResponseTokens, maxResponseTokens),
      stop,
      // Drawn before the first await, so seeds follow call order.
      seed: options.seed ?? Math.floor(this.#random() * 2 ** 32),
      frequencyPenalty: options.frequencyPenalty,
      presencePenalty: options.presencePenalty,
      logitBias: options.logitBias,
      constraint: minTokens > 0
        ? minTokensConstraint(minTokens, stop, this.model.config.vocabSize, options.constraint)
        : options.constraint,
    };
    const { samples, policyVersion } = await this.#batcher.submit(request);
    return samples.map((s) => ({
      promptTokens: [...promptTokens],
      responseTokens: s.tokens,
      logprobs: s.logprobs,
      text: this.tokenizer.decode(s.finishReason === "stop" ? s.tokens.slice(0, -1) : s.tokens),
      finishReason: s.finishReason,
      policyVersion,
    }));
  }
}

/** The id of stop text `text`: a token of the vocabulary, or text that encodes to one token. */
function stopTokenId(tokenizer: Tokenizer, text: string): number {
  const id = tokenizer.tokenToId(text);
  if (id !== undefined) return id;
  const ids = tokenizer.encode(text);
  if (ids.length === 1) return ids[0];
  throw new Error(
    `Cannot use stop text ${
      JSON.stringify(text)
    }: it must be one token, and the tokenizer encodes it as ${ids.length}`,
  );
}
