/** The tiny Qwen2 config (hidden 16, one layer, GQA 2:1, vocab 13) the trainer tests train. */
export const TINY_QWEN2 = {
  model_type: "qwen2",
  hidden_size: 16,
  intermediate_size: 24,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  vocab_size: 13,
  max_position_embeddings: 64,
  tie_word_embeddings: true,
};
