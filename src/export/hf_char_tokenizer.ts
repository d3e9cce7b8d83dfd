/**
 * rft's character tokenizer (`char_tokenizer.json`) as Hugging Face tokenizer files that
 * transformers.js (and @huggingface/tokenizers, and Python's tokenizers) load: a BPE model with
 * one token per character and no merges, the special tokens as added tokens, a Fuse decoder
 * (tokens joined without spaces) and no post-processor: text encodes to its characters alone,
 * with or without `add_special_tokens`, as rft encoded prompts in training (`tokenizer_config.json`
 * says the same: `add_bos_token: false`), so transformers.js's `AutoTokenizer` gives the ids
 * `pipeline` and rft give. A character outside the vocabulary, which rft refuses, maps to `<unk>`
 * here when there is one. Writes no files itself.
 */

import type { CharTokenizer } from "../model/char_tokenizer.ts";

/** An added (special) token entry of tokenizer.json. */
function addedToken(content: string, id: number) {
  return {
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  };
}

/** The contents of `tokenizer.json` and `tokenizer_config.json` equivalent to `tokenizer`. */
export function hfCharTokenizerFiles(tokenizer: CharTokenizer): {
  tokenizer: Record<string, unknown>;
  config: Record<string, unknown>;
} {
  const tokens = [...tokenizer.special, ...Array.from(tokenizer.chars)];
  const role = (token: string) => (tokenizer.special.includes(token) ? token : undefined);
  return {
    tokenizer: {
      version: "1.0",
      truncation: null,
      padding: null,
      added_tokens: tokenizer.special.map(addedToken),
      normalizer: null,
      pre_tokenizer: null,
      post_processor: null,
      decoder: { type: "Fuse" },
      model: {
        type: "BPE",
        dropout: null,
        unk_token: role("<unk>") ?? null,
        continuing_subword_prefix: null,
        end_of_word_suffix: null,
        fuse_unk: false,
        byte_fallback: false,
        ignore_merges: false,
        vocab: Object.fromEntries(tokens.map((token, id) => [token, id])),
        merges: [],
      },
    },
    config: {
      tokenizer_class: "PreTrainedTokenizerFast",
      bos_token: role("<bos>") ?? null,
      eos_token: role("<eos>") ?? null,
      pad_token: role("<pad>") ?? null,
      unk_token: role("<unk>") ?? null,
      // rft encodes prompts without special tokens (the pipeline follows add_*_token) and
      // generates after left padding.
      add_bos_token: false,
      add_eos_token: false,
      padding_side: "left",
      clean_up_tokenization_spaces: false,
      chat_template: tokenizer.chatTemplate,
    },
  };
}
