/**
 * Tiny configs of the families whose architectures the original Llama/GPT-2 tests do not cover,
 * shared by the model, engine, LoRA and export tests: Llama 3.2 (llama3 RoPE scaling, tied
 * embeddings), Gemma 3 (sliding windows, four norms a layer), Gemma 2 (alternating windows,
 * score and final softcaps), Gemma (1 + w norms, head_dim 12 of hidden 16), Phi-3 (fused projections), OLMo 2
 * (post-norms, q/k norms over whole projections), SmolLM3 (NoPE layers), Granite (multipliers),
 * Phi-4-mini (partial rotary, longrope) and StableLM 2 (LayerNorms, partial rotary). Configs
 * only: no test here.
 */

/** Llama 3.2's `rope_scaling` as its config.json ships it. */
export const LLAMA32_ROPE_SCALING = {
  factor: 32,
  low_freq_factor: 1,
  high_freq_factor: 4,
  original_max_position_embeddings: 8192,
  rope_type: "llama3",
};

/**
 * A Llama 3.2 over `vocab` tokens: its RoPE base and scaling, tied embeddings, two layers of
 * GQA 2/1 with head_dim 8, whose four frequencies fall in llama3's high (two), medium and low
 * bands.
 */
export function tinyLlama32Config(vocab: number): Record<string, unknown> {
  return {
    architectures: ["LlamaForCausalLM"],
    model_type: "llama",
    hidden_size: 16,
    intermediate_size: 24,
    num_hidden_layers: 2,
    num_attention_heads: 2,
    num_key_value_heads: 1,
    head_dim: 8,
    hidden_act: "silu",
    rms_norm_eps: 1e-5,
    rope_theta: 500000,
    rope_scaling: LLAMA32_ROPE_SCALING,
    max_position_embeddings: 131072,
    vocab_size: vocab,
    tie_word_embeddings: true,
  };
}

/**
 * A Gemma 3 text model over `vocab` tokens with a sliding window of 4 (shorter than the test
 * sequences): layers sliding, full (its RoPE scaled linearly by 8, as Gemma 3 1B+ ship it) and
 * sliding again with `layerCount` 3, or sliding then full with 2; q/k norms, four norms a layer,
 * (1 + w) RMSNorm, GELU-tanh, query_pre_attn_scalar 12 (not head_dim 8), embeddings scaled by
 * sqrt(16) in bfloat16, `more` keys added.
 */
export function tinyGemma3Config(
  vocab: number,
  layerCount: 2 | 3 = 2,
  more: Record<string, unknown> = {},
): Record<string, unknown> {
  const layerTypes = ["sliding_attention", "full_attention", "sliding_attention"];
  return {
    architectures: ["Gemma3ForCausalLM"],
    model_type: "gemma3_text",
    hidden_size: 20,
    intermediate_size: 24,
    num_hidden_layers: layerCount,
    num_attention_heads: 2,
    num_key_value_heads: 1,
    head_dim: 8,
    hidden_activation: "gelu_pytorch_tanh",
    rms_norm_eps: 1e-6,
    query_pre_attn_scalar: 12,
    rope_theta: 1000000,
    rope_local_base_freq: 10000,
    rope_scaling: { rope_type: "linear", factor: 8 },
    sliding_window: 4,
    layer_types: layerTypes.slice(0, layerCount),
    final_logit_softcapping: null,
    attn_logit_softcapping: null,
    max_position_embeddings: 512,
    vocab_size: vocab,
    tie_word_embeddings: true,
    torch_dtype: "bfloat16",
    ...more,
  };
}

/** The sizes the tiny Llama-layout rows share: 2 layers of GQA 2/1, head_dim 8, SiLU. */
const TINY_SIZES = {
  hidden_size: 16,
  intermediate_size: 24,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  hidden_act: "silu",
  max_position_embeddings: 128,
};

/**
 * A Gemma 2 over `vocab` tokens with a sliding window of 4: layers sliding then full (derived:
 * no `layer_types`), four norms a layer, (1 + w) RMSNorm, GELU-tanh, query_pre_attn_scalar 12,
 * embeddings scaled by sqrt(20) in bfloat16, scores soft-capped at 1.5 (low enough to bend
 * them) and final logits at 3.
 */
export function tinyGemma2Config(vocab: number): Record<string, unknown> {
  const {
    layer_types: _types,
    rope_local_base_freq: _local,
    rope_scaling: _scaling,
    ...shared
  } = tinyGemma3Config(vocab, 2);
  return {
    ...shared,
    architectures: ["Gemma2ForCausalLM"],
    model_type: "gemma2",
    rope_theta: 10000,
    attn_logit_softcapping: 1.5,
    final_logit_softcapping: 3,
  };
}

/**
 * A Gemma (1) over `vocab` tokens: (1 + w) RMSNorm, embeddings scaled by sqrt(16) in bfloat16,
 * GELU-tanh (no `hidden_activation`: transformers' default, whatever `hidden_act` says), head_dim
 * 12 independent of hidden / heads, MQA (2 heads, 1 KV head), tied embeddings.
 */
export function tinyGemmaConfig(vocab: number): Record<string, unknown> {
  return {
    architectures: ["GemmaForCausalLM"],
    model_type: "gemma",
    ...TINY_SIZES,
    head_dim: 12,
    hidden_act: "gelu",
    rms_norm_eps: 1e-6,
    rope_theta: 10000,
    vocab_size: vocab,
    torch_dtype: "bfloat16",
  };
}

/**
 * A Phi-3 over `vocab` tokens: fused qkv_proj and gate_up_proj, GQA 2/1 (as Phi-3-medium), a
 * sliding window of 3 on every layer, an untied head.
 */
export function tinyPhi3Config(vocab: number): Record<string, unknown> {
  return {
    architectures: ["Phi3ForCausalLM"],
    model_type: "phi3",
    ...TINY_SIZES,
    rms_norm_eps: 1e-5,
    rope_theta: 10000,
    rope_scaling: null,
    sliding_window: 3,
    vocab_size: vocab,
    tie_word_embeddings: false,
  };
}

/**
 * An OLMo 2 over `vocab` tokens: norms after attention and MLP only, RMSNorms of the whole q and
 * k projections, GQA 4/2 of head_dim 4, an untied head.
 */
export function tinyOlmo2Config(vocab: number): Record<string, unknown> {
  return {
    architectures: ["Olmo2ForCausalLM"],
    model_type: "olmo2",
    hidden_size: 16,
    intermediate_size: 24,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    hidden_act: "silu",
    rms_norm_eps: 1e-6,
    rope_theta: 500000,
    max_position_embeddings: 128,
    vocab_size: vocab,
    tie_word_embeddings: false,
  };
}

/**
 * A SmolLM3 over `vocab` tokens: NoPE on every second layer (`no_rope_layer_interval` 2; the
 * shipped 4 would leave two layers without one), GQA 2/1, tied embeddings by the model_type's
 * default.
 */
export function tinySmolLm3Config(vocab: number): Record<string, unknown> {
  return {
    architectures: ["SmolLM3ForCausalLM"],
    model_type: "smollm3",
    ...TINY_SIZES,
    rms_norm_eps: 1e-6,
    rope_theta: 5000000,
    no_rope_layer_interval: 2,
    vocab_size: vocab,
  };
}

/**
 * A Granite over `vocab` tokens: its embedding, attention and residual multipliers and logits
 * divisor (none of them 1), GQA 4/2, tied embeddings.
 */
export function tinyGraniteConfig(vocab: number): Record<string, unknown> {
  return {
    architectures: ["GraniteForCausalLM"],
    model_type: "granite",
    ...TINY_SIZES,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    rms_norm_eps: 1e-5,
    rope_theta: 10000,
    embedding_multiplier: 3,
    attention_multiplier: 0.3,
    residual_multiplier: 0.4,
    logits_scaling: 2.5,
    vocab_size: vocab,
    tie_word_embeddings: true,
  };
}

/**
 * A Phi-4-mini over `vocab` tokens: Phi-3's fused projections, partial rotary (0.75 of head_dim
 * 8: 6 dims rotate) and longrope over an original 64 positions (max 512: factor 8, so scores
 * scale by the attention factor's square), GQA 2/1, tied embeddings.
 */
export function tinyPhi4MiniConfig(vocab: number): Record<string, unknown> {
  return {
    ...tinyPhi3Config(vocab),
    partial_rotary_factor: 0.75,
    rope_scaling: { type: "longrope", short_factor: [1, 1.5, 3], long_factor: [2, 8, 30] },
    original_max_position_embeddings: 64,
    max_position_embeddings: 512,
    sliding_window: 512,
    tie_word_embeddings: true,
  };
}

/**
 * A StableLM 2 over `vocab` tokens: LayerNorms with biases, q/k/v biases, partial rotary (0.25 of
 * head_dim 8), an untied head.
 */
export function tinyStableLmConfig(vocab: number): Record<string, unknown> {
  return {
    architectures: ["StableLmForCausalLM"],
    model_type: "stablelm",
    ...TINY_SIZES,
    num_key_value_heads: 2,
    layer_norm_eps: 1e-5,
    use_qkv_bias: true,
    partial_rotary_factor: 0.25,
    rope_theta: 10000,
    vocab_size: vocab,
    tie_word_embeddings: false,
  };
}

/**
 * The tiny config of each family above, keyed by what it exercises: the rows the model, LoRA and
 * export tests share (each adds its own Llama, GPT-2 or variant rows around them).
 */
export function tinyFamilyConfigs(vocab: number): Record<string, Record<string, unknown>> {
  return {
    "llama 3.2 (llama3 rope scaling, tied)": tinyLlama32Config(vocab),
    "gemma 3 (window 4, sliding and full layers)": tinyGemma3Config(vocab),
    "phi3 (fused qkv and gate_up, window 3)": tinyPhi3Config(vocab),
    "olmo2 (post-norms, q/k norms over projections)": tinyOlmo2Config(vocab),
    "gemma (1 + w norms, head_dim 12, GELU-tanh)": tinyGemmaConfig(vocab),
    "gemma 2 (alternating windows, score and final softcaps)": tinyGemma2Config(vocab),
    "smollm3 (NoPE every second layer)": tinySmolLm3Config(vocab),
    "granite (embedding, attention, residual and logit multipliers)": tinyGraniteConfig(vocab),
    "phi-4-mini (partial rotary 0.75, longrope)": tinyPhi4MiniConfig(vocab),
    "stablelm (LayerNorms, q/k/v biases, partial rotary 0.25)": tinyStableLmConfig(vocab),
  };
}
