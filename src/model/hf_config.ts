/**
 * Reads a Hugging Face `config.json` into a typed config for the two families rft runs: the Llama
 * family (model_type llama, mistral, qwen2, qwen3; SmolLM ships as llama) and GPT-2. Missing
 * optional keys take the defaults transformers uses for that model_type. Keys rft does not use
 * are ignored; `rope_scaling` is passed through raw for the model builder to accept or refuse.
 */

import { InputError } from "../util/input_error.ts";

/** model_type values of the Llama family. */
export const LLAMA_MODEL_TYPES = ["llama", "mistral", "qwen2", "qwen3"] as const;
/** Every model_type rft can load. */
export const SUPPORTED_MODEL_TYPES = [...LLAMA_MODEL_TYPES, "gpt2"] as const;

/** What both families share. */
interface CommonConfig {
  hiddenSize: number;
  intermediateSize: number;
  numLayers: number;
  numHeads: number;
  vocabSize: number;
  maxPositions: number;
  tieWordEmbeddings: boolean;
  bosTokenId: number | undefined;
  /** Every token id that ends generation (`eos_token_id` may be a list). */
  eosTokenIds: number[];
  padTokenId: number | undefined;
}

/** A Llama-family decoder: RMSNorm, rotary attention with grouped KV heads, gated MLP. */
export interface LlamaConfig extends CommonConfig {
  family: "llama";
  modelType: typeof LLAMA_MODEL_TYPES[number];
  numKvHeads: number;
  headDim: number;
  rmsNormEps: number;
  ropeTheta: number;
  /** Raw `rope_scaling` (null when absent); the builder must refuse kinds it does not implement. */
  ropeScaling: Record<string, unknown> | null;
  /** Activation of the gated MLP (`hidden_act`). */
  hiddenAct: string;
  /** Bias on the q, k, v projections (qwen2 always has it). */
  attentionBias: boolean;
  /** RMSNorm on each head of q and k before rotary embedding (qwen3). */
  qkNorm: boolean;
}

/** A GPT-2 decoder: LayerNorm, learned positions, fused qkv, GELU MLP, tied embeddings. */
export interface Gpt2Config extends CommonConfig {
  family: "gpt2";
  modelType: "gpt2";
  layerNormEps: number;
  /** `activation_function`, e.g. "gelu_new". */
  activation: string;
}

/** A config rft can build a model from. */
export type ModelConfig = LlamaConfig | Gpt2Config;

/** transformers' defaults per Llama-family model_type, for keys a config may leave out. */
const LLAMA_DEFAULTS = {
  llama: { maxPositions: 2048, attentionBias: false },
  mistral: { maxPositions: 4096 * 32, attentionBias: false },
  qwen2: { maxPositions: 32768, attentionBias: true },
  qwen3: { maxPositions: 32768, attentionBias: false },
} as const;

/** Reads and validates `<dir>/config.json`. */
export async function readHfConfig(dir: string): Promise<ModelConfig> {
  const path = `${dir}/config.json`;
  let json: unknown;
  try {
    json = JSON.parse(await Deno.readTextFile(path));
  } catch (err) {
    throw new InputError(`Cannot read ${path}: ${(err as Error).message}`);
  }
  return parseHfConfig(json, path);
}

/** Validates parsed config JSON; `file` names the source in error messages. */
export function parseHfConfig(json: unknown, file = "config.json"): ModelConfig {
  const keys = new ConfigKeys(json, file);
  const modelType = keys.string("model_type");
  if (modelType === "gpt2") return gpt2Config(keys);
  if (!(LLAMA_MODEL_TYPES as readonly string[]).includes(modelType)) {
    throw new InputError(
      `Cannot read ${file}: model_type "${modelType}" is not supported; supported: ${
        SUPPORTED_MODEL_TYPES.join(", ")
      }`,
    );
  }
  return llamaConfig(keys, modelType as LlamaConfig["modelType"]);
}

function llamaConfig(keys: ConfigKeys, modelType: LlamaConfig["modelType"]): LlamaConfig {
  const defaults = LLAMA_DEFAULTS[modelType];
  const hiddenSize = keys.positiveInt("hidden_size");
  const numHeads = keys.positiveInt("num_attention_heads");
  const numKvHeads = keys.positiveInt("num_key_value_heads", numHeads);
  if (numHeads % numKvHeads !== 0) {
    keys.fail("num_key_value_heads", numKvHeads, `a divisor of num_attention_heads (${numHeads})`);
  }
  if (!keys.has("head_dim") && hiddenSize % numHeads !== 0) {
    keys.fail("hidden_size", hiddenSize, `a multiple of num_attention_heads (${numHeads})`);
  }
  const ropeScaling = keys.get("rope_scaling") ?? null;
  if (ropeScaling !== null && !isRecord(ropeScaling)) {
    keys.fail("rope_scaling", ropeScaling, "an object or null");
  }
  return {
    family: "llama",
    modelType,
    hiddenSize,
    intermediateSize: keys.positiveInt("intermediate_size"),
    numLayers: keys.positiveInt("num_hidden_layers"),
    numHeads,
    numKvHeads,
    headDim: keys.positiveInt("head_dim", hiddenSize / numHeads),
    vocabSize: keys.positiveInt("vocab_size"),
    maxPositions: keys.positiveInt("max_position_embeddings", defaults.maxPositions),
    rmsNormEps: keys.positiveNumber("rms_norm_eps", 1e-6),
    ropeTheta: keys.positiveNumber("rope_theta", 10000),
    ropeScaling: ropeScaling as Record<string, unknown> | null,
    hiddenAct: keys.string("hidden_act", "silu"),
    attentionBias: keys.boolean("attention_bias", defaults.attentionBias),
    qkNorm: modelType === "qwen3",
    tieWordEmbeddings: keys.boolean("tie_word_embeddings", false),
    ...tokenIds(keys),
  };
}

function gpt2Config(keys: ConfigKeys): Gpt2Config {
  const hiddenSize = keys.positiveInt("n_embd");
  const numHeads = keys.positiveInt("n_head");
  if (hiddenSize % numHeads !== 0) {
    keys.fail("n_embd", hiddenSize, `a multiple of n_head (${numHeads})`);
  }
  return {
    family: "gpt2",
    modelType: "gpt2",
    hiddenSize,
    intermediateSize: keys.positiveInt("n_inner", 4 * hiddenSize),
    numLayers: keys.positiveInt("n_layer"),
    numHeads,
    vocabSize: keys.positiveInt("vocab_size"),
    maxPositions: keys.positiveInt("n_positions"),
    layerNormEps: keys.positiveNumber("layer_norm_epsilon", 1e-5),
    activation: keys.string("activation_function", "gelu_new"),
    tieWordEmbeddings: keys.boolean("tie_word_embeddings", true),
    ...tokenIds(keys),
  };
}

function tokenIds(keys: ConfigKeys) {
  const eos = keys.get("eos_token_id") ?? [];
  const eosTokenIds = typeof eos === "number" ? [eos] : eos;
  if (!Array.isArray(eosTokenIds) || !eosTokenIds.every(isTokenId)) {
    keys.fail("eos_token_id", eos, "a token id or a list of token ids");
  }
  return {
    bosTokenId: keys.tokenId("bos_token_id"),
    eosTokenIds: eosTokenIds as number[],
    padTokenId: keys.tokenId("pad_token_id"),
  };
}

/** Typed access to a config object; every failure names the file, the key and the value. */
class ConfigKeys {
  readonly #json: Record<string, unknown>;

  constructor(json: unknown, readonly file: string) {
    if (!isRecord(json)) throw new InputError(`Cannot read ${file}: expected a JSON object`);
    this.#json = json;
  }

  has(key: string): boolean {
    return this.#json[key] !== undefined && this.#json[key] !== null;
  }

  get(key: string): unknown {
    return this.#json[key];
  }

  fail(key: string, value: unknown, expected: string): never {
    throw new InputError(
      `Cannot read ${this.file}: key "${key}" is ${JSON.stringify(value)}; expected ${expected}`,
    );
  }

  #read<T>(key: string, fallback: T | undefined, ok: (v: unknown) => boolean, what: string): T {
    if (!this.has(key)) {
      if (fallback !== undefined) return fallback;
      throw new InputError(`Cannot read ${this.file}: key "${key}" is missing; expected ${what}`);
    }
    const value = this.#json[key];
    return ok(value) ? value as T : this.fail(key, value, what);
  }

  positiveInt(key: string, fallback?: number): number {
    return this.#read(
      key,
      fallback,
      (v) => Number.isSafeInteger(v) && (v as number) > 0,
      "a positive integer",
    );
  }

  positiveNumber(key: string, fallback?: number): number {
    return this.#read(key, fallback, (v) => typeof v === "number" && v > 0, "a positive number");
  }

  boolean(key: string, fallback?: boolean): boolean {
    return this.#read(key, fallback, (v) => typeof v === "boolean", "true or false");
  }

  string(key: string, fallback?: string): string {
    return this.#read(key, fallback, (v) => typeof v === "string", "a string");
  }

  /** An optional token id (absent or null gives undefined). */
  tokenId(key: string): number | undefined {
    return this.has(key) ? this.#read(key, undefined, isTokenId, "a token id") : undefined;
  }
}

function isTokenId(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
