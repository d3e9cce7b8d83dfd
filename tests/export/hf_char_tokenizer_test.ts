import { assertEquals } from "../_asserts.ts";
import { hfCharTokenizerFiles } from "../../src/export/hf_char_tokenizer.ts";
import { CharTokenizer, loadCharTokenizer } from "../../src/model/char_tokenizer.ts";
import { loadTokenizer } from "../../src/model/tokenizer.ts";
import { localModelId, transformers } from "./_transformers_js.ts";

/** Texts with special tokens inside and at the ends, and the empty text. */
const TEXTS = ["29+48=", "<bos>12+3=<eos>", "", "=<pad>9<eos><eos>", "7"];

/** A directory holding the HF files of `tokenizer`. */
async function hfFiles(tokenizer: CharTokenizer): Promise<string> {
  const dir = await Deno.makeTempDir();
  const files = hfCharTokenizerFiles(tokenizer);
  await Deno.writeTextFile(`${dir}/tokenizer.json`, JSON.stringify(files.tokenizer));
  await Deno.writeTextFile(`${dir}/tokenizer_config.json`, JSON.stringify(files.config));
  return dir;
}

Deno.test("the example's char tokenizer as tokenizer.json encodes as rft trained (no <bos>) and decodes as rft's in transformers.js and rft", async () => {
  const char = await loadCharTokenizer(
    new URL("../../examples/addition/model/char_tokenizer.json", import.meta.url).pathname,
  );
  const dir = await hfFiles(char);
  try {
    const tjs = await transformers.AutoTokenizer.from_pretrained(localModelId(dir));
    const hf = await loadTokenizer(dir);
    assertEquals(hf.vocabSize, char.vocabSize);
    assertEquals([hf.bosId, hf.eosId, hf.padId], [char.bosId, char.eosId, char.padId]);
    for (const text of TEXTS) {
      // As rft encoded prompts in training (no special tokens), whether special tokens are
      // asked for or not: AutoTokenizer adds them by default, the pipeline follows
      // tokenizer_config.json's add_bos_token (false).
      const expected = char.encode(text);
      for (const addSpecialTokens of [false, true]) {
        assertEquals(hf.encode(text, { addSpecialTokens }), expected, `rft HF "${text}"`);
        const ids = tjs.encode(text, { add_special_tokens: addSpecialTokens });
        assertEquals(ids, expected, `transformers.js "${text}" ${addSpecialTokens}`);
      }
      assertEquals(tjs(text).input_ids.tolist()[0].map(Number), expected, `tokenizer("${text}")`);
      const ids = char.encode(text);
      for (const skipSpecialTokens of [false, true]) {
        const expected = char.decode(ids, { skipSpecialTokens });
        assertEquals(hf.decode(ids, { skipSpecialTokens }), expected, `rft HF decode "${text}"`);
        if (ids.length === 0) continue; // transformers.js refuses to decode no ids
        const decoded = tjs.decode(ids, { skip_special_tokens: skipSpecialTokens });
        assertEquals(decoded, expected, `transformers.js decode "${text}"`);
      }
    }
    // Every id decodes to its own character or special token.
    const all = Array.from({ length: char.vocabSize }, (_, id) => id);
    assertEquals(tjs.decode(all), char.decode(all));
    const messages = [{ role: "user", content: "29+48=" }, { role: "assistant", content: "77" }];
    assertEquals(
      tjs.apply_chat_template(messages, { tokenize: false }),
      char.applyChatTemplate(messages),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a char tokenizer with <unk> and characters beyond the BMP round-trips through transformers.js", async () => {
  const char = new CharTokenizer("ab 😀\n", ["<unk>", "<eos>"]);
  const dir = await hfFiles(char);
  try {
    const tjs = await transformers.AutoTokenizer.from_pretrained(localModelId(dir));
    for (const text of ["a😀b\n", "b<eos> a", "a?b"]) {
      // No <bos> added, as in training; "?" is unknown in both.
      assertEquals(tjs.encode(text), char.encode(text), text);
      assertEquals(tjs.decode(char.encode(text)), char.decode(char.encode(text)), text);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
