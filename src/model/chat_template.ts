/**
 * Chat templates: turn a conversation into prompt text with a Jinja template, as HF models ship
 * them (`chat_template` in tokenizer_config.json), rendered by @huggingface/jinja with the
 * variables transformers passes: messages, add_generation_prompt, bos_token, eos_token,
 * pad_token. Also the built-in template of char-level models. Does not tokenize, and passes no
 * tools or documents.
 */

import { Template } from "@huggingface/jinja";

/** One turn of a conversation. */
export interface ChatMessage {
  role: string;
  content: string;
}

/** Options of {@link ChatTemplate.apply}. */
export interface ChatOptions {
  /** Append the opening of an assistant turn, so the model writes the reply. */
  addGenerationPrompt?: boolean;
}

/** Texts of the special tokens a template may use (absent ones render as ""). */
export interface SpecialTokenTexts {
  bos?: string;
  eos?: string;
  pad?: string;
}

/**
 * The built-in template of char-level models: each message's content followed by the eos
 * token, after one bos token; roles are not written, and the generation prompt adds nothing
 * (the reply follows the last eos).
 */
export const CHAR_CHAT_TEMPLATE =
  "{{ bos_token }}{% for message in messages %}{{ message.content }}{{ eos_token }}{% endfor %}";

/** A parsed chat template bound to its tokenizer's special tokens. */
export class ChatTemplate {
  readonly #template: Template;

  /** Parses `source`; `origin` (a file) names the template in error messages. */
  constructor(
    readonly source: string,
    readonly origin: string,
    readonly tokens: SpecialTokenTexts = {},
  ) {
    try {
      this.#template = new Template(source);
    } catch (err) {
      throw new Error(`Cannot parse the chat template of ${origin}: ${(err as Error).message}`);
    }
  }

  /** Renders `messages` to prompt text. */
  apply(messages: readonly ChatMessage[], { addGenerationPrompt = false }: ChatOptions = {}) {
    const { bos, eos, pad } = this.tokens;
    const variables: Record<string, unknown> = {
      messages,
      add_generation_prompt: addGenerationPrompt,
      ...(bos === undefined ? {} : { bos_token: bos }),
      ...(eos === undefined ? {} : { eos_token: eos }),
      ...(pad === undefined ? {} : { pad_token: pad }),
    };
    try {
      return this.#template.render(variables);
    } catch (err) {
      throw new Error(
        `Cannot apply the chat template of ${this.origin}: ${(err as Error).message}`,
      );
    }
  }
}
