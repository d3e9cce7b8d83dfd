/**
 * The two-layer configs of each family that gradient checks of the whole model run (the
 * transformer's and LoRA's): tiny enough for f64 finite differences, two layers so that what a
 * layer adds meets the next layer in the residual stream.
 */

/** Vocabulary of the gradient-check configs. */
export const GRADCHECK_VOCAB = 13;

/** Token sequences of unequal length the gradient checks score. */
export const GRADCHECK_SEQUENCES = [[1, 5, 2, 9, 12, 3, 7], [4, 4, 0, 11]];

/** Llama with grouped-query attention and an untied LM head. */
export const GRADCHECK_LLAMA: Record<string, unknown> = {
  model_type: "llama",
  hidden_size: 8,
  intermediate_size: 12,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  rms_norm_eps: 1e-5,
  rope_theta: 10000,
  vocab_size: GRADCHECK_VOCAB,
  tie_word_embeddings: false,
};

/** GPT-2 with its tied LM head. */
export const GRADCHECK_GPT2: Record<string, unknown> = {
  model_type: "gpt2",
  n_embd: 8,
  n_layer: 2,
  n_head: 2,
  n_positions: 16,
  vocab_size: GRADCHECK_VOCAB,
  layer_norm_epsilon: 1e-5,
  activation_function: "gelu_new",
};
