/**
 * A Hugging Face tokenizer's files as an export writes them: made to encode text the way rft
 * encoded prompts in training, without the special tokens a post-processor would add (a
 * `TemplateProcessing` that puts `<s>` / `<|begin_of_text|>` before the text, a BERT- or
 * RoBERTa-style one), whether or not the caller asks for special tokens, and with
 * `tokenizer_config.json` saying so (`add_bos_token: false`, `add_eos_token: false`): the
 * `pipeline`, `AutoTokenizer` and rft then give the same ids. Tokens a chat template writes are
 * text and stay. Files without such a post-processor or flags are left byte for byte.
 */

type Json = Record<string, unknown>;

/** A post-processor that adds no special token (a template keeps its sequences). */
function withoutSpecialTokens(processor: unknown): unknown {
  if (processor === null || typeof processor !== "object") return processor;
  const p = processor as Json;
  switch (p.type) {
    case "TemplateProcessing": {
      const keep = (items: unknown) =>
        Array.isArray(items) ? items.filter((item) => !(item as Json)?.SpecialToken) : items;
      return { ...p, single: keep(p.single), pair: keep(p.pair), special_tokens: {} };
    }
    case "Sequence":
      return {
        ...p,
        processors: ((p.processors as unknown[]) ?? []).map(withoutSpecialTokens)
          .filter((x) => x !== null),
      };
    case "BertProcessing":
    case "RobertaProcessing":
      return null;
    default:
      return p; // ByteLevel and others add no tokens
  }
}

/** The text of a side file. */
function text(content: Uint8Array | string): string {
  return typeof content === "string" ? content : new TextDecoder().decode(content);
}

/**
 * `tokenizer.json` and `tokenizer_config.json` of `files` (by name) rewritten as the file comment
 * says; other files, and files already so, unchanged.
 */
export function trainingTokenizerFiles(
  files: ReadonlyMap<string, Uint8Array | string>,
): Map<string, Uint8Array | string> {
  const out = new Map(files);
  const tokenizer = files.get("tokenizer.json");
  if (tokenizer !== undefined) {
    const parsed = JSON.parse(text(tokenizer)) as Json;
    const processor = withoutSpecialTokens(parsed.post_processor ?? null);
    if (JSON.stringify(processor) !== JSON.stringify(parsed.post_processor ?? null)) {
      out.set("tokenizer.json", JSON.stringify({ ...parsed, post_processor: processor }, null, 2));
    }
  }
  const config = files.get("tokenizer_config.json");
  const parsedConfig = config === undefined ? {} : JSON.parse(text(config)) as Json;
  if (parsedConfig.add_bos_token !== false || parsedConfig.add_eos_token !== false) {
    out.set(
      "tokenizer_config.json",
      JSON.stringify({ ...parsedConfig, add_bos_token: false, add_eos_token: false }, null, 2) +
        "\n",
    );
  }
  return out;
}
