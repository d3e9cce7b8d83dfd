/**
 * Tiny model configs of every architectural switch the exports handle (GQA, qwen2 biases, qwen3
 * q/k norm and head_dim, tied and untied heads, Llama 3.2's RoPE scaling, Gemma 3's windows and
 * norms, GPT-2) and seeded
 * random parameters for them,
 * shared by the export tests. Configs only: no test here.
 */

import { shapeSize } from "../../src/graph/tensor.ts";
import type { ModelConfig } from "../../src/model/hf_config.ts";
import { parameterSpecs } from "../../src/model/parameters.ts";
import { uniformArray } from "../../src/util/random.ts";
import { tinyFamilyConfigs, tinyGemma3Config } from "../_tiny_families.ts";

/** The vocabulary of every config (3 special tokens and 14 characters in the tokenizer tests). */
export const VOCAB = 17;

/** Tiny configs: every architectural switch the export handles. */
export const CONFIGS: Record<string, Record<string, unknown>> = {
  "llama (GQA 4/2, untied)": {
    model_type: "llama",
    hidden_size: 16,
    intermediate_size: 20,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    rms_norm_eps: 1e-5,
    rope_theta: 10000,
    vocab_size: VOCAB,
    tie_word_embeddings: false,
  },
  "qwen2 (q/k/v bias, GQA 6/2, tied)": {
    model_type: "qwen2",
    hidden_size: 12,
    intermediate_size: 14,
    num_hidden_layers: 2,
    num_attention_heads: 6,
    num_key_value_heads: 2,
    rms_norm_eps: 1e-6,
    rope_theta: 1000000,
    vocab_size: VOCAB,
    tie_word_embeddings: true,
  },
  "qwen3 (q/k norm, head_dim 6 != 12 / 4, GQA 4/1)": {
    model_type: "qwen3",
    hidden_size: 12,
    head_dim: 6,
    intermediate_size: 10,
    num_hidden_layers: 1,
    num_attention_heads: 4,
    num_key_value_heads: 1,
    rms_norm_eps: 1e-6,
    rope_theta: 10000,
    vocab_size: VOCAB,
    tie_word_embeddings: true,
  },
  "gpt2 (tied)": {
    model_type: "gpt2",
    n_embd: 12,
    n_layer: 2,
    n_head: 3,
    n_positions: 16,
    vocab_size: VOCAB,
    layer_norm_epsilon: 1e-5,
  },
  ...tinyFamilyConfigs(VOCAB),
  "gemma 3 (window 4, sliding and full layers)": tinyGemma3Config(VOCAB, 3),
  "gpt2 (untied)": {
    model_type: "gpt2",
    n_embd: 8,
    n_layer: 1,
    n_head: 2,
    n_positions: 12,
    vocab_size: VOCAB,
    tie_word_embeddings: false,
  },
};

/**
 * Parameters uniform in [-0.5, 0.5), norm weights 1 + [-0.3, 0.3): spread enough that every
 * path changes the logits.
 */
export function randomParameters(
  cfg: ModelConfig,
  seed: number,
): Map<string, Float32Array<ArrayBuffer>> {
  return new Map(
    parameterSpecs(cfg).map((spec, i) => {
      const n = shapeSize(spec.shape);
      const data = spec.init === "ones"
        ? uniformArray(n, seed + i, 0.7, 1.3)
        : uniformArray(n, seed + i, -0.5, 0.5);
      return [spec.name, data];
    }),
  );
}
