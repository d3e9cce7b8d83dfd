/**
 * The architecture fields of published config.json files of the families people fine-tune, as
 * their Hub repositories ship them (tokenizer and generation keys trimmed), for the config and
 * real-shape tests. Data only: no test here.
 */

import { LLAMA32_ROPE_SCALING } from "../_tiny_families.ts";

/** Llama-3.2-1B's config.json (the architecture fields). */
export const LLAMA32_1B = {
  architectures: ["LlamaForCausalLM"],
  model_type: "llama",
  hidden_size: 2048,
  intermediate_size: 8192,
  num_hidden_layers: 16,
  num_attention_heads: 32,
  num_key_value_heads: 8,
  head_dim: 64,
  hidden_act: "silu",
  rms_norm_eps: 1e-5,
  rope_theta: 500000,
  rope_scaling: LLAMA32_ROPE_SCALING,
  max_position_embeddings: 131072,
  vocab_size: 128256,
  tie_word_embeddings: true,
  bos_token_id: 128000,
  eos_token_id: 128001,
  torch_dtype: "bfloat16",
};

/** Every sixth of `layers` layers full attention, the others sliding (Gemma 3's 5:1). */
function fiveToOne(layers: number): string[] {
  return Array.from(
    { length: layers },
    (_, l) => (l + 1) % 6 === 0 ? "full_attention" : "sliding_attention",
  );
}

/** gemma-3-270m's config.json (transformers 4.55: `layer_types`). */
export const GEMMA3_270M = {
  architectures: ["Gemma3ForCausalLM"],
  attention_bias: false,
  attn_logit_softcapping: null,
  bos_token_id: 2,
  eos_token_id: 1,
  final_logit_softcapping: null,
  head_dim: 256,
  hidden_activation: "gelu_pytorch_tanh",
  hidden_size: 640,
  intermediate_size: 2048,
  layer_types: fiveToOne(18),
  max_position_embeddings: 32768,
  model_type: "gemma3_text",
  num_attention_heads: 4,
  num_hidden_layers: 18,
  num_key_value_heads: 1,
  pad_token_id: 0,
  query_pre_attn_scalar: 256,
  rms_norm_eps: 1e-6,
  rope_local_base_freq: 10000.0,
  rope_scaling: null,
  rope_theta: 1000000.0,
  sliding_window: 512,
  torch_dtype: "bfloat16",
  use_bidirectional_attention: false,
  vocab_size: 262144,
};

/** gemma-3-1b's config.json (transformers 4.50: `sliding_window_pattern`, no `layer_types`). */
export const GEMMA3_1B = {
  architectures: ["Gemma3ForCausalLM"],
  attention_bias: false,
  attn_logit_softcapping: null,
  bos_token_id: 2,
  eos_token_id: [1, 106],
  final_logit_softcapping: null,
  head_dim: 256,
  hidden_activation: "gelu_pytorch_tanh",
  hidden_size: 1152,
  intermediate_size: 6912,
  max_position_embeddings: 32768,
  model_type: "gemma3_text",
  num_attention_heads: 4,
  num_hidden_layers: 26,
  num_key_value_heads: 1,
  pad_token_id: 0,
  query_pre_attn_scalar: 256,
  rms_norm_eps: 1e-6,
  rope_local_base_freq: 10000,
  rope_scaling: null,
  rope_theta: 1000000,
  sliding_window: 512,
  sliding_window_pattern: 6,
  torch_dtype: "bfloat16",
  vocab_size: 262144,
};

/** Phi-3-mini-4k-instruct's config.json. */
export const PHI3_MINI_4K = {
  architectures: ["Phi3ForCausalLM"],
  bos_token_id: 1,
  eos_token_id: 32000,
  hidden_act: "silu",
  hidden_size: 3072,
  intermediate_size: 8192,
  max_position_embeddings: 4096,
  model_type: "phi3",
  num_attention_heads: 32,
  num_hidden_layers: 32,
  num_key_value_heads: 32,
  original_max_position_embeddings: 4096,
  pad_token_id: 32000,
  rms_norm_eps: 1e-5,
  rope_scaling: null,
  rope_theta: 10000.0,
  sliding_window: 2047,
  tie_word_embeddings: false,
  torch_dtype: "bfloat16",
  vocab_size: 32064,
};

/** OLMo-2-0425-1B's config.json. */
export const OLMO2_1B = {
  architectures: ["Olmo2ForCausalLM"],
  attention_bias: false,
  eos_token_id: 100257,
  hidden_act: "silu",
  hidden_size: 2048,
  intermediate_size: 8192,
  max_position_embeddings: 4096,
  model_type: "olmo2",
  num_attention_heads: 16,
  num_hidden_layers: 16,
  num_key_value_heads: 16,
  pad_token_id: 100277,
  rms_norm_eps: 1e-6,
  rope_scaling: null,
  rope_theta: 500000,
  tie_word_embeddings: false,
  torch_dtype: "float32",
  vocab_size: 100352,
};

/**
 * Factors of longrope's shape: `count` values rising from 1 to `top` (the published lists rise so;
 * these are stand-ins of their length, not the published values).
 */
function risingFactors(count: number, top: number): number[] {
  return Array.from({ length: count }, (_, i) => 1 + (top - 1) * (i / (count - 1)) ** 2);
}

/** Phi-3.5-mini-instruct's config.json (its longrope factor lists stood in: `risingFactors`). */
export const PHI35_MINI = {
  ...PHI3_MINI_4K,
  max_position_embeddings: 131072,
  original_max_position_embeddings: 4096,
  rope_scaling: {
    long_factor: risingFactors(48, 64),
    short_factor: risingFactors(48, 1.2),
    type: "longrope",
  },
  sliding_window: 262144,
};

/** Phi-4-mini-instruct's config.json (its longrope factor lists stood in: `risingFactors`). */
export const PHI4_MINI = {
  architectures: ["Phi3ForCausalLM"],
  bos_token_id: 199999,
  eos_token_id: 199999,
  hidden_act: "silu",
  hidden_size: 3072,
  intermediate_size: 8192,
  max_position_embeddings: 131072,
  model_type: "phi3",
  num_attention_heads: 24,
  num_hidden_layers: 32,
  num_key_value_heads: 8,
  original_max_position_embeddings: 4096,
  pad_token_id: 199999,
  partial_rotary_factor: 0.75,
  rms_norm_eps: 1e-5,
  rope_scaling: {
    long_factor: risingFactors(48, 64),
    short_factor: risingFactors(48, 1.2),
    type: "longrope",
  },
  rope_theta: 10000.0,
  sliding_window: 262144,
  tie_word_embeddings: true,
  torch_dtype: "bfloat16",
  vocab_size: 200064,
};

/** SmolLM3-3B's config.json (NoPE layers by `no_rope_layer_interval`). */
export const SMOLLM3_3B = {
  architectures: ["SmolLM3ForCausalLM"],
  attention_bias: false,
  bos_token_id: null,
  eos_token_id: 128012,
  hidden_act: "silu",
  hidden_size: 2048,
  intermediate_size: 11008,
  max_position_embeddings: 65536,
  mlp_bias: false,
  model_type: "smollm3",
  no_rope_layer_interval: 4,
  num_attention_heads: 16,
  num_hidden_layers: 36,
  num_key_value_heads: 4,
  pad_token_id: 128004,
  rms_norm_eps: 1e-6,
  rope_scaling: null,
  rope_theta: 5000000.0,
  sliding_window: null,
  use_sliding_window: false,
  torch_dtype: "bfloat16",
  vocab_size: 128256,
};

/** granite-3.3-2b-instruct's config.json. */
export const GRANITE_33_2B = {
  architectures: ["GraniteForCausalLM"],
  attention_bias: false,
  attention_multiplier: 0.015625,
  bos_token_id: 0,
  embedding_multiplier: 12.0,
  eos_token_id: 0,
  hidden_act: "silu",
  hidden_size: 2048,
  intermediate_size: 8192,
  logits_scaling: 8.0,
  max_position_embeddings: 131072,
  mlp_bias: false,
  model_type: "granite",
  num_attention_heads: 32,
  num_hidden_layers: 40,
  num_key_value_heads: 8,
  pad_token_id: 0,
  residual_multiplier: 0.22,
  rms_norm_eps: 1e-5,
  rope_scaling: null,
  rope_theta: 10000000.0,
  tie_word_embeddings: true,
  torch_dtype: "bfloat16",
  vocab_size: 49159,
};

/** stablelm-2-1_6b's config.json. */
export const STABLELM2_1_6B = {
  architectures: ["StableLmForCausalLM"],
  bos_token_id: 100257,
  eos_token_id: 100257,
  hidden_act: "silu",
  hidden_size: 2048,
  intermediate_size: 5632,
  layer_norm_eps: 1e-5,
  max_position_embeddings: 4096,
  model_type: "stablelm",
  num_attention_heads: 32,
  num_hidden_layers: 24,
  num_key_value_heads: 32,
  partial_rotary_factor: 0.25,
  qk_layernorm: false,
  rope_theta: 10000,
  tie_word_embeddings: false,
  torch_dtype: "bfloat16",
  use_parallel_residual: false,
  use_qkv_bias: true,
  vocab_size: 100352,
};

/** gemma-2-2b's config.json. */
export const GEMMA2_2B = {
  architectures: ["Gemma2ForCausalLM"],
  attention_bias: false,
  attn_logit_softcapping: 50.0,
  bos_token_id: 2,
  eos_token_id: 1,
  final_logit_softcapping: 30.0,
  head_dim: 256,
  hidden_activation: "gelu_pytorch_tanh",
  hidden_size: 2304,
  intermediate_size: 9216,
  max_position_embeddings: 8192,
  model_type: "gemma2",
  num_attention_heads: 8,
  num_hidden_layers: 26,
  num_key_value_heads: 4,
  pad_token_id: 0,
  query_pre_attn_scalar: 256,
  rms_norm_eps: 1e-6,
  rope_theta: 10000.0,
  sliding_window: 4096,
  torch_dtype: "float32",
  vocab_size: 256000,
};

/** gemma-2b's config.json (GemmaForCausalLM; `hidden_act` "gelu", no `hidden_activation`). */
export const GEMMA_2B = {
  architectures: ["GemmaForCausalLM"],
  bos_token_id: 2,
  eos_token_id: 1,
  head_dim: 256,
  hidden_act: "gelu",
  hidden_size: 2048,
  intermediate_size: 16384,
  max_position_embeddings: 8192,
  model_type: "gemma",
  num_attention_heads: 8,
  num_hidden_layers: 18,
  num_key_value_heads: 1,
  pad_token_id: 0,
  rms_norm_eps: 1e-6,
  rope_scaling: null,
  rope_theta: 10000.0,
  torch_dtype: "bfloat16",
  vocab_size: 256000,
};
