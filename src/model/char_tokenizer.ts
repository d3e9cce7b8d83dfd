/**
 * A character-level tokenizer for models trained from scratch, stored as `char_tokenizer.json`:
 *   {"type": "char", "chars": "\n !?abc", "special": ["<pad>", "<bos>", "<eos>"]}
 * with optional "special" (default as shown) and "chat_template" (default CHAR_CHAT_TEMPLATE).
 * Ids: the special tokens first, in list order, then one per character (code point) of "chars".
 * "<pad>", "<bos>", "<eos>", "<unk>" in "special" take those roles; without "<unk>" an unknown
 * character is an error. Special token texts in the input encode to their ids. No normalization.
 */

import {
  CHAR_CHAT_TEMPLATE,
  type ChatMessage,
  type ChatOptions,
  ChatTemplate,
} from "./chat_template.ts";
import type { DecodeOptions, EncodeOptions, Tokenizer } from "./tokenizer.ts";
import { checkTokenIds } from "./token_ids.ts";
import { InputError } from "../util/input_error.ts";

/** File name of a char tokenizer in a model directory. */
export const CHAR_TOKENIZER_FILE = "char_tokenizer.json";

/** Special tokens of a char tokenizer unless told otherwise. */
export const DEFAULT_SPECIAL_TOKENS: readonly string[] = ["<pad>", "<bos>", "<eos>"];

/** The JSON form of a char tokenizer. */
export interface CharTokenizerJson {
  type: "char";
  chars: string;
  special: string[];
  chat_template?: string;
}

/** Options of the {@link CharTokenizer} constructor. */
export interface CharTokenizerOptions {
  /** Jinja chat template (default {@link CHAR_CHAT_TEMPLATE}). */
  chatTemplate?: string;
  /** The file the tokenizer comes from, for error messages. */
  origin?: string;
}

/** Maps each character, and each special token, to one id. */
export class CharTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly bosId: number | undefined;
  readonly eosId: number | undefined;
  readonly padId: number | undefined;
  readonly unkId: number | undefined;
  readonly chatTemplate: string;
  readonly #tokens: readonly string[];
  readonly #ids: ReadonlyMap<string, number>;
  readonly #specialsLongestFirst: readonly string[];
  readonly #chat: ChatTemplate;

  constructor(
    readonly chars: string,
    readonly special: readonly string[] = DEFAULT_SPECIAL_TOKENS,
    { chatTemplate = CHAR_CHAT_TEMPLATE, origin }: CharTokenizerOptions = {},
  ) {
    const where = origin ? `Cannot load ${origin}` : "Cannot build a char tokenizer";
    const characters = Array.from(chars);
    this.#tokens = [...special, ...characters];
    const ids = new Map<string, number>();
    this.#tokens.forEach((token, id) => {
      if (token === "") throw new InputError(`${where}: "special" has an empty token`);
      if (ids.has(token)) {
        const list = id < special.length || ids.get(token)! < special.length
          ? `"special" and "chars"`
          : `"chars"`;
        throw new InputError(`${where}: ${JSON.stringify(token)} appears twice in ${list}`);
      }
      ids.set(token, id);
    });
    this.#ids = ids;
    this.#specialsLongestFirst = [...special].sort((a, b) => b.length - a.length);
    this.vocabSize = this.#tokens.length;
    this.bosId = ids.get("<bos>");
    this.eosId = ids.get("<eos>");
    this.padId = ids.get("<pad>");
    this.unkId = ids.get("<unk>");
    this.chatTemplate = chatTemplate;
    this.#chat = new ChatTemplate(chatTemplate, origin ?? "a char tokenizer", {
      bos: this.bosId === undefined ? undefined : "<bos>",
      eos: this.eosId === undefined ? undefined : "<eos>",
      pad: this.padId === undefined ? undefined : "<pad>",
    });
  }

  /** A tokenizer over the distinct characters of `text`, sorted. */
  static fromText(
    text: string,
    special: readonly string[] = DEFAULT_SPECIAL_TOKENS,
  ): CharTokenizer {
    return new CharTokenizer([...new Set(text)].sort().join(""), special);
  }

  encode(text: string, { addSpecialTokens = false }: EncodeOptions = {}): number[] {
    const ids = addSpecialTokens && this.bosId !== undefined ? [this.bosId] : [];
    for (let i = 0; i < text.length;) {
      const token = this.#specialsLongestFirst.find((s) => text.startsWith(s, i)) ??
        String.fromCodePoint(text.codePointAt(i)!);
      const id = this.#ids.get(token) ?? this.unkId;
      if (id === undefined) {
        const code = token.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
        throw new InputError(
          `Cannot encode with the char tokenizer: character ${
            JSON.stringify(token)
          } (U+${code}) at index ${i} is not in its vocabulary, and it has no "<unk>"`,
        );
      }
      ids.push(id);
      i += token.length;
    }
    return ids;
  }

  decode(ids: readonly number[], { skipSpecialTokens = false }: DecodeOptions = {}): string {
    checkTokenIds(ids, "the char tokenizer");
    return ids.map((id) => {
      const token = this.#tokens[id] ?? ""; // past the vocabulary: no text (see Tokenizer)
      return skipSpecialTokens && id < this.special.length ? "" : token;
    }).join("");
  }

  tokenToId(token: string): number | undefined {
    return this.#ids.get(token);
  }

  applyChatTemplate(messages: readonly ChatMessage[], options?: ChatOptions): string {
    return this.#chat.apply(messages, options);
  }

  get chatTemplateSource(): string {
    return this.chatTemplate;
  }

  /**
   * See {@link Tokenizer.tokenBytes}: the role tokens (pad, bos, eos, unk) add no bytes; other
   * special tokens (markup such as `<tool_call>`) add their text's.
   */
  tokenBytes(): readonly (Uint8Array | null)[] {
    const utf8 = new TextEncoder();
    const roles = [this.padId, this.bosId, this.eosId, this.unkId];
    return this.#tokens.map((token, id) => roles.includes(id) ? null : utf8.encode(token));
  }

  /** The JSON form; `chat_template` only when it is not the built-in one. */
  toJSON(): CharTokenizerJson {
    return {
      type: "char",
      chars: this.chars,
      special: [...this.special],
      ...(this.chatTemplate === CHAR_CHAT_TEMPLATE ? {} : { chat_template: this.chatTemplate }),
    };
  }

  /** Writes the JSON form to `path`. */
  async save(path: string): Promise<void> {
    await Deno.writeTextFile(path, JSON.stringify(this.toJSON(), null, 2) + "\n");
  }
}

/** Reads and validates a `char_tokenizer.json`. */
export async function loadCharTokenizer(path: string): Promise<CharTokenizer> {
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(await Deno.readTextFile(path));
  } catch (err) {
    throw new InputError(`Cannot load ${path}: ${(err as Error).message}`);
  }
  const fail = (key: string, expected: string): never => {
    throw new InputError(
      `Cannot load ${path}: "${key}" is ${JSON.stringify(json?.[key])}; expected ${expected}`,
    );
  };
  if (typeof json !== "object" || json === null || json.type !== "char") fail("type", `"char"`);
  const { chars, special = DEFAULT_SPECIAL_TOKENS, chat_template: chatTemplate } = json;
  if (typeof chars !== "string") fail("chars", "a string");
  if (!Array.isArray(special) || !special.every((s) => typeof s === "string")) {
    fail("special", "a list of strings");
  }
  if (chatTemplate !== undefined && typeof chatTemplate !== "string") {
    fail("chat_template", "a string");
  }
  return new CharTokenizer(chars as string, special as string[], {
    chatTemplate: chatTemplate as string | undefined,
    origin: path,
  });
}
