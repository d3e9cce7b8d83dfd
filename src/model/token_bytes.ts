/**
 * The bytes each token of a Hugging Face tokenizer adds to decoded text, read from its
 * vocabulary and decoder: byte-level BPE tokens (GPT-2, Llama 3, Qwen) map each character back
 * through GPT-2's byte-to-unicode table, SentencePiece tokens (Llama 2, Mistral) turn `▁` into a
 * space and `<0xNN>` into byte NN, added tokens are their text, special added tokens are null.
 * Constrained decoding walks these bytes; nothing here encodes or decodes text.
 */

import type { Tokenizer as HfTokenizerCore } from "@huggingface/tokenizers";

/** GPT-2's `bytes_to_unicode`, inverted: the byte each character of a byte-level token stands for. */
function byteLevelTable(): Map<string, number> {
  const printable = (b: number) =>
    (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const table = new Map<string, number>();
  let next = 0;
  for (let b = 0; b < 256; b++) {
    table.set(String.fromCodePoint(printable(b) ? b : 256 + next++), b);
  }
  return table;
}

/** The decoder types of a `tokenizer.json` decoder (a `Sequence`'s members included). */
function decoderTypes(decoder: unknown): Set<string> {
  const types = new Set<string>();
  const visit = (d: unknown) => {
    const node = d as { type?: unknown; decoders?: unknown[] } | null;
    if (typeof node?.type === "string") types.add(node.type);
    node?.decoders?.forEach(visit);
  };
  visit(decoder);
  return types;
}

const BYTE_FALLBACK = /^<0x([0-9A-Fa-f]{2})>$/;

/** The bytes of every token id below `vocabSize` (null: a special token, or no such id). */
export function hfTokenBytes(
  core: HfTokenizerCore,
  vocabSize: number,
  decoder: unknown,
): (Uint8Array | null)[] {
  const types = decoderTypes(decoder);
  const byteLevel = types.has("ByteLevel") ? byteLevelTable() : undefined;
  const utf8 = new TextEncoder();
  const added = core.get_added_tokens_decoder();
  const bytesOf = (token: string): Uint8Array => {
    if (byteLevel) {
      const bytes = Array.from(token, (c) => byteLevel.get(c));
      if (bytes.every((b) => b !== undefined)) return Uint8Array.from(bytes as number[]);
      return utf8.encode(token);
    }
    const fallback = BYTE_FALLBACK.exec(token);
    if (fallback && types.has("ByteFallback")) return Uint8Array.of(parseInt(fallback[1], 16));
    return utf8.encode(token.replaceAll("\u2581", " "));
  };
  return Array.from({ length: vocabSize }, (_, id) => {
    const special = added.get(id);
    if (special) return special.special ? null : utf8.encode(special.content);
    const token = core.id_to_token(id);
    return token === undefined ? null : bytesOf(token);
  });
}
