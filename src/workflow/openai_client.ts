/**
 * What a workflow gets when the run serves its policy over the OpenAI-compatible API
 * (`explorer.rollout_model.enable_openai_api`): an {@link OpenAIEndpoint} that opens recorded
 * conversations, each with its own base URL, API key and `openai` client. Every call made
 * through a conversation is recorded by the server with the exact token ids and log-probs, so
 * the workflow turns it into experiences (`conversation.recording.toExperiences`) whose action
 * mask covers only the tokens the model generated. The server itself lives in `src/serve/`.
 */

import OpenAI from "openai";
import type { RecordedConversation } from "./recorded_conversation.ts";

/** The policy's OpenAI-compatible endpoint, as workflows see it. */
export interface OpenAIEndpoint {
  /** Starts a conversation whose calls are recorded; close it when the episode is over. */
  openConversation(): OpenAIConversation;
}

/** Where and how a recorded conversation reaches the server. */
export interface OpenAIConversationOptions {
  /** Base URL of the API, ending in `/v1` (for `fetch` or any OpenAI client). */
  baseUrl: string;
  /** The key to send as `Authorization: Bearer ...` (any text when the server needs none). */
  apiKey: string;
  /** The `model` name of the policy. */
  model: string;
  /** Where the server records the calls. */
  recording: RecordedConversation;
  /** Stops the server from accepting calls on this conversation. */
  close: () => void;
}

/** One recorded conversation with the policy. */
export class OpenAIConversation {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly model: string;
  readonly recording: RecordedConversation;
  readonly #close: () => void;
  #client?: OpenAI;

  constructor(options: OpenAIConversationOptions) {
    this.baseUrl = options.baseUrl;
    this.apiKey = options.apiKey;
    this.model = options.model;
    this.recording = options.recording;
    this.#close = options.close;
  }

  /**
   * The official `openai` client bound to this conversation (no retries: a failed call is the
   * workflow's to handle).
   *
   * @example
   * ```ts
   * declare const conversation: OpenAIConversation;
   * const reply = await conversation.client().chat.completions.create({
   *   model: conversation.model,
   *   messages: [{ role: "user", content: "2+2=" }],
   * });
   * ```
   */
  client(): OpenAI {
    return this.#client ??= new OpenAI({
      baseURL: this.baseUrl,
      apiKey: this.apiKey,
      maxRetries: 0,
    });
  }

  /** Ends the conversation: later calls through it are refused (404). */
  close(): void {
    this.#close();
  }
}
