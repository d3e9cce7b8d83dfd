/**
 * The model as a workflow sees it (Trinity's `ModelWrapper`): sample `n` continuations of a
 * prompt, a chat or raw token ids, get back text, tokens and the generating policy's log-probs
 * stamped with the policy version that produced them. Calls from many concurrent workflow
 * runners are merged into shared engine batches by the implementation
 * (`policy_rollout_model.ts`); tests may implement this interface with a scripted model.
 */

import type { LogitsOptions } from "../engine/logits_batch.ts";
import type { ChatMessage, ChatOptions } from "../model/chat_template.ts";
import type { Tokenizer } from "../model/tokenizer.ts";

/**
 * Sampling options of one call; absent ones take the run's defaults (`model` section).
 * Penalties, logit bias and a token constraint (`LogitsOptions`) change which tokens are
 * sampled, not the log-probs reported.
 */
export interface RolloutOptions extends LogitsOptions {
  /** Samples of the prompt. Default 1. */
  n?: number;
  /** 0 = greedy. */
  temperature?: number;
  topK?: number;
  topP?: number;
  /** Most tokens generated per sample (capped by the run's `max_response_tokens`). */
  maxTokens?: number;
  /** Texts that end a sample (each must be one token), on top of the model's EOS tokens. */
  stop?: readonly string[];
  /** Seed of the sampler; default: drawn from the model's seeded stream. */
  seed?: number;
}

/** One sampled continuation. */
export interface Rollout {
  /** The prompt as token ids (after left truncation to `max_prompt_tokens`). */
  promptTokens: number[];
  /** Generated ids (a stop token, if one ended the sample, is the last). */
  responseTokens: number[];
  /** log p of each response token under the generating policy (at the sampling temperature). */
  logprobs: number[];
  /** The response decoded, without a final stop token. */
  text: string;
  finishReason: "stop" | "length";
  /** Version of the weights that generated it. */
  policyVersion: number;
}

/** What workflows call to sample from the policy. */
export interface RolloutModel {
  /** The version of the weights now used for new calls. */
  readonly policyVersion: number;
  /** The policy's tokenizer. */
  readonly tokenizer: Tokenizer;
  /** `n` samples continuing a text prompt (encoded as is) or token ids. */
  generate(prompt: string | readonly number[], options?: RolloutOptions): Promise<Rollout[]>;
  /**
   * `n` samples of the assistant's reply to `messages` (the model's chat template applied, with
   * `template.tools` and `template.variables` when given).
   */
  chat(
    messages: readonly ChatMessage[],
    options?: RolloutOptions,
    template?: Omit<ChatOptions, "addGenerationPrompt">,
  ): Promise<Rollout[]>;
}
