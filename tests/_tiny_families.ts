/**
 * Tiny configs of the families whose architectures the original Llama/GPT-2 tests do not cover,
 * shared by the model, engine, LoRA and export tests: Llama 3.2 (llama3 RoPE scaling, tied
 * embeddings). Configs only: no test here.
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
