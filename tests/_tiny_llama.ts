/** The tiny llama most model-level tests run: one layer, hidden 16, GQA 2/1, tied embeddings. */

/** config.json of the tiny llama over `vocab` tokens; `more` adds or overrides keys. */
export function tinyLlamaConfig(
  vocab: number,
  more: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    model_type: "llama",
    hidden_size: 16,
    intermediate_size: 32,
    num_hidden_layers: 1,
    num_attention_heads: 2,
    num_key_value_heads: 1,
    rms_norm_eps: 1e-6,
    rope_theta: 10000,
    vocab_size: vocab,
    max_position_embeddings: 32,
    tie_word_embeddings: true,
    ...more,
  };
}
