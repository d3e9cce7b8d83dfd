/**
 * The tokenizer rft uses, its Hugging Face implementation (`tokenizer.json` and
 * `tokenizer_config.json` through @huggingface/tokenizers, chat template from the config or
 * `chat_template.jinja`), and `loadTokenizer`, which picks HF or char-level (`char_tokenizer.json`)
 * from a model directory. Does not train tokenizers, and takes special tokens from the
 * tokenizer files only (not from config.json or generation_config.json).
 */

import { Tokenizer as HfTokenizerCore } from "@huggingface/tokenizers";
import { CHAR_TOKENIZER_FILE, loadCharTokenizer } from "./char_tokenizer.ts";
import { checkTokenIds } from "./token_ids.ts";
import { hfTokenBytes } from "./token_bytes.ts";
import { type ChatMessage, type ChatOptions, ChatTemplate } from "./chat_template.ts";
import { InputError } from "../util/input_error.ts";

/** Options of {@link Tokenizer.encode}. */
export interface EncodeOptions {
  /**
   * Add the tokenizer's own special tokens (e.g. a leading bos). Default false: text rendered
   * by a chat template already carries them.
   */
  addSpecialTokens?: boolean;
}

/** Options of {@link Tokenizer.decode}. */
export interface DecodeOptions {
  /** Leave special tokens (bos, eos, pad, chat markers) out of the text. */
  skipSpecialTokens?: boolean;
}

/** Text to token ids and back, with the special ids generation needs. */
export interface Tokenizer {
  /** One more than the largest token id. */
  readonly vocabSize: number;
  readonly bosId: number | undefined;
  readonly eosId: number | undefined;
  readonly padId: number | undefined;
  encode(text: string, options?: EncodeOptions): number[];
  /**
   * The text of `ids`. Ids at or past `vocabSize` add nothing, as in transformers: a model's
   * vocabulary is often padded past its tokenizer's (Qwen2.5: 151936 rows, 151665 tokens), and
   * a sampled padding id is a token with no text, not an error. A negative or fractional id
   * throws.
   */
  decode(ids: readonly number[], options?: DecodeOptions): string;
  /** The id of one token's text, if the vocabulary has it. */
  tokenToId(token: string): number | undefined;
  /** Renders a conversation with the model's chat template; throws when it has none. */
  applyChatTemplate(messages: readonly ChatMessage[], options?: ChatOptions): string;
  /** The source of the model's chat template, if it has one. */
  readonly chatTemplateSource: string | undefined;
  /**
   * The bytes each token adds to decoded text, by id (UTF-8; a byte-level BPE token may hold
   * part of a character); null for special tokens (bos, eos, chat markers), which add none.
   */
  tokenBytes(): readonly (Uint8Array | null)[];
}

/** Names of the files an HF tokenizer is read from. */
export const HF_TOKENIZER_FILES = {
  tokenizer: "tokenizer.json",
  config: "tokenizer_config.json",
  chatTemplate: "chat_template.jinja",
} as const;

/** A tokenizer from HF's `tokenizer.json`, with ids of special tokens from its config. */
export class HfTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly bosId: number | undefined;
  readonly eosId: number | undefined;
  readonly padId: number | undefined;
  readonly #core: HfTokenizerCore;
  readonly #chat: ChatTemplate | undefined;
  readonly #cleanUpSpaces: boolean;
  readonly #decoderConfig: unknown;
  #tokenBytes?: (Uint8Array | null)[];
  readonly #unkId: number | undefined;

  /**
   * Builds from parsed `tokenizer.json` and `tokenizer_config.json`; `dir` names them in
   * errors. `chatTemplate` overrides the config's `chat_template`.
   */
  constructor(
    readonly dir: string,
    tokenizerJson: unknown,
    config: Record<string, unknown>,
    chatTemplate?: { source: string; origin: string },
  ) {
    const configPath = `${dir}/${HF_TOKENIZER_FILES.config}`;
    const tokens = {
      bos: tokenText(config, "bos_token", configPath),
      eos: tokenText(config, "eos_token", configPath),
      pad: tokenText(config, "pad_token", configPath),
      unk: tokenText(config, "unk_token", configPath),
    };
    try {
      this.#core = new HfTokenizerCore(tokenizerJson as object, {
        ...config,
        ...tokenConfig(tokens),
      });
    } catch (err) {
      throw new InputError(
        `Cannot load ${dir}/${HF_TOKENIZER_FILES.tokenizer}: ${(err as Error).message}`,
      );
    }
    this.vocabSize = this.#core.model!.vocab.length;
    const idOf = (key: string, token: string | undefined) => {
      if (token === undefined) return undefined;
      const id = this.#core.token_to_id(token);
      if (id === undefined) {
        throw new InputError(
          `Cannot load ${configPath}: "${key}" is "${token}", which ${HF_TOKENIZER_FILES.tokenizer} does not define`,
        );
      }
      return id;
    };
    this.bosId = idOf("bos_token", tokens.bos);
    this.eosId = idOf("eos_token", tokens.eos);
    this.padId = idOf("pad_token", tokens.pad);
    const modelUnk = (tokenizerJson as { model?: { unk_token?: unknown } }).model?.unk_token;
    const unk = typeof modelUnk === "string" ? modelUnk : tokens.unk;
    this.#unkId = unk === undefined ? undefined : this.#core.token_to_id(unk);
    const template = chatTemplate ?? templateInConfig(config, configPath);
    this.#chat = template && new ChatTemplate(template.source, template.origin, tokens);
    // transformers' current default; @huggingface/tokenizers would clean up unless told.
    this.#cleanUpSpaces = config.clean_up_tokenization_spaces === true;
    this.#decoderConfig = (tokenizerJson as { decoder?: unknown }).decoder;
  }

  get chatTemplateSource(): string | undefined {
    return this.#chat?.source;
  }

  tokenBytes(): readonly (Uint8Array | null)[] {
    return this.#tokenBytes ??= hfTokenBytes(this.#core, this.vocabSize, this.#decoderConfig);
  }

  /**
   * The ids of `text`. A piece the vocabulary lacks is the unknown token when the tokenizer
   * defines one (the model's `unk_token`, else the config's), as Hugging Face's tokenizers do;
   * without one it is bad input naming the piece.
   */
  encode(text: string, { addSpecialTokens = false }: EncodeOptions = {}): number[] {
    const { ids, tokens } = this.#core.encode(text, { add_special_tokens: addSpecialTokens });
    const missing = ids.findIndex((id) => id === undefined);
    if (missing < 0) return ids;
    if (this.#unkId === undefined) {
      throw new InputError(
        `Cannot encode ${
          JSON.stringify(tokens[missing])
        }: the tokenizer of ${this.dir} has no token for it and defines no unknown token (unk_token)`,
      );
    }
    return ids.map((id) => id ?? this.#unkId!);
  }

  decode(ids: readonly number[], { skipSpecialTokens = false }: DecodeOptions = {}): string {
    checkTokenIds(ids, `the tokenizer of ${this.dir}`);
    const known = ids.filter((id) => id < this.vocabSize);
    if (known.length === 0) return "";
    return this.#core.decode(known, {
      skip_special_tokens: skipSpecialTokens,
      clean_up_tokenization_spaces: this.#cleanUpSpaces,
    });
  }

  tokenToId(token: string): number | undefined {
    return this.#core.token_to_id(token);
  }

  applyChatTemplate(messages: readonly ChatMessage[], options?: ChatOptions): string {
    if (!this.#chat) {
      throw new Error(
        `Cannot apply a chat template: ${this.dir} has none (no "chat_template" in ${HF_TOKENIZER_FILES.config}, no ${HF_TOKENIZER_FILES.chatTemplate})`,
      );
    }
    return this.#chat.apply(messages, options);
  }
}

/** Loads the HF tokenizer of model directory `dir`. */
export async function loadHfTokenizer(dir: string): Promise<HfTokenizer> {
  const tokenizerJson = await readJson(`${dir}/${HF_TOKENIZER_FILES.tokenizer}`);
  if (tokenizerJson === undefined) {
    throw new InputError(`Cannot load ${dir}/${HF_TOKENIZER_FILES.tokenizer}: file not found`);
  }
  return hfTokenizerFrom(dir, tokenizerJson);
}

/** Loads the tokenizer of a model directory: `tokenizer.json` (HF) or `char_tokenizer.json`. */
export async function loadTokenizer(dir: string): Promise<Tokenizer> {
  const [hf, char] = [HF_TOKENIZER_FILES.tokenizer, CHAR_TOKENIZER_FILE];
  const tokenizerJson = await readJson(`${dir}/${hf}`);
  if (tokenizerJson !== undefined) return hfTokenizerFrom(dir, tokenizerJson);
  if (await readText(`${dir}/${char}`) !== undefined) return loadCharTokenizer(`${dir}/${char}`);
  throw new InputError(`Cannot load a tokenizer from ${dir}: found neither ${hf} nor ${char}`);
}

/** Reads the optional config and template files beside an already parsed `tokenizer.json`. */
async function hfTokenizerFrom(dir: string, tokenizerJson: unknown): Promise<HfTokenizer> {
  const configPath = `${dir}/${HF_TOKENIZER_FILES.config}`;
  const config = await readJson(configPath) ?? {};
  if (typeof config !== "object" || config === null || Array.isArray(config)) {
    throw new InputError(`Cannot load ${configPath}: expected a JSON object`);
  }
  const inConfig = (config as Record<string, unknown>).chat_template;
  const jinjaPath = `${dir}/${HF_TOKENIZER_FILES.chatTemplate}`;
  const jinja = inConfig === undefined || inConfig === null ? await readText(jinjaPath) : undefined;
  return new HfTokenizer(
    dir,
    tokenizerJson,
    config as Record<string, unknown>,
    jinja === undefined ? undefined : { source: jinja, origin: jinjaPath },
  );
}

/** The text of special token `key`: a string, an AddedToken-like `{content}`, or absent. */
function tokenText(config: Record<string, unknown>, key: string, path: string) {
  const value = config[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  const content = (value as { content?: unknown }).content;
  if (typeof content === "string") return content;
  throw new InputError(
    `Cannot load ${path}: "${key}" is ${
      JSON.stringify(value)
    }; expected a string or {"content": string}`,
  );
}

/** Special tokens as plain strings, the form @huggingface/tokenizers reads. */
function tokenConfig(tokens: Record<string, string | undefined>) {
  return Object.fromEntries(
    Object.entries(tokens).filter(([, v]) => v !== undefined).map(([k, v]) => [`${k}_token`, v]),
  );
}

/** `chat_template` of a tokenizer config: a string, or a list of named ones ("default" wins). */
function templateInConfig(config: Record<string, unknown>, path: string) {
  const value = config.chat_template;
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return { source: value, origin: path };
  const named = Array.isArray(value) &&
    value.find((t) => t?.name === "default" && typeof t.template === "string");
  if (named) return { source: named.template as string, origin: `${path} (template "default")` };
  throw new InputError(
    `Cannot load ${path}: "chat_template" is neither a string nor a list with a "default" template`,
  );
}

/** The text of `path`, or undefined when there is no such file. */
async function readText(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw new InputError(`Cannot read ${path}: ${(err as Error).message}`);
  }
}

/** Parsed JSON of `path`, or undefined when there is no such file. */
async function readJson(path: string): Promise<unknown> {
  const text = await readText(path);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new InputError(`Cannot load ${path}: not valid JSON: ${(err as Error).message}`);
  }
}
