/**
 * Model shapes the benchmarks build random models of (config.json architecture fields only;
 * nothing is downloaded): SmolLM2-135M's, Qwen2.5-0.5B's and Qwen2.5-1.5B's real shapes, two smaller ones
 * with SmolLM2's proportions and a tiny one with Qwen's vocabulary (for Qwen's tokenizer).
 */

/** SmolLM2-135M's config.json (the architecture fields). */
const SMOLLM2_135M = {
  model_type: "llama",
  hidden_size: 576,
  intermediate_size: 1536,
  num_hidden_layers: 30,
  num_attention_heads: 9,
  num_key_value_heads: 3,
  head_dim: 64,
  rms_norm_eps: 1e-5,
  rope_theta: 100000,
  vocab_size: 49152,
  max_position_embeddings: 8192,
  tie_word_embeddings: true,
  bos_token_id: 0,
  eos_token_id: 0,
};

/** Qwen2.5-0.5B's config.json (the architecture fields). */
const QWEN2_5_0_5B = {
  model_type: "qwen2",
  hidden_size: 896,
  intermediate_size: 4864,
  num_hidden_layers: 24,
  num_attention_heads: 14,
  num_key_value_heads: 2,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000,
  vocab_size: 151936,
  max_position_embeddings: 32768,
  tie_word_embeddings: true,
  bos_token_id: 151643,
  eos_token_id: 151643,
};

/** Qwen2.5-1.5B's config.json (the architecture fields). */
const QWEN2_5_1_5B = {
  ...QWEN2_5_0_5B,
  hidden_size: 1536,
  intermediate_size: 8960,
  num_hidden_layers: 28,
  num_attention_heads: 12,
  num_key_value_heads: 2,
};

/** A quick-look model (0.7M parameters). */
const TINY = {
  ...SMOLLM2_135M,
  hidden_size: 128,
  intermediate_size: 256,
  num_hidden_layers: 4,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 32,
  vocab_size: 512,
};

/** A mid-size model (4.2M parameters) with a 4096-token vocabulary. */
const SMALL = {
  ...SMOLLM2_135M,
  hidden_size: 256,
  intermediate_size: 768,
  num_hidden_layers: 4,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 64,
  vocab_size: 4096,
};

/** Qwen2.5-0.5B's vocabulary and tokens on a tiny body (9.8M parameters, nearly all embedding). */
const QWEN_TINY = {
  ...QWEN2_5_0_5B,
  hidden_size: 64,
  intermediate_size: 128,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
};

/** The shapes by the name the benchmarks' `--models` flags take. */
export const MODEL_SHAPES: Readonly<Record<string, Record<string, unknown>>> = {
  tiny: TINY,
  small: SMALL,
  "smollm2-135m": SMOLLM2_135M,
  "qwen2.5-0.5b": QWEN2_5_0_5B,
  "qwen2.5-1.5b": QWEN2_5_1_5B,
  "qwen-tiny": QWEN_TINY,
};

/** The shape called `name`; throws listing the known names. */
export function modelShape(name: string): Record<string, unknown> {
  const shape = MODEL_SHAPES[name];
  if (!shape) {
    throw new Error(
      `Cannot pick model "${name}": expected one of ${Object.keys(MODEL_SHAPES).join(", ")}`,
    );
  }
  return shape;
}
