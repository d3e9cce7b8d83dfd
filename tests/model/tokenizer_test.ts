import { CharTokenizer, loadCharTokenizer } from "../../src/model/char_tokenizer.ts";
import { CHAR_CHAT_TEMPLATE } from "../../src/model/chat_template.ts";
import { HfTokenizer, loadHfTokenizer, loadTokenizer } from "../../src/model/tokenizer.ts";
import { assertEquals, assertRejects, assertThrows } from "../_asserts.ts";
import { TINY_QWEN_CONFIG, writeQwenConfigAndTokenizer } from "../trinity/_tiny_qwen.ts";

/** GPT-2's byte-to-character map: byte-level BPE vocabularies are written in these characters. */
function byteChars(): string[] {
  const printable = (b: number) => (b >= 33 && b <= 126) || (b >= 161 && b <= 255 && b !== 173);
  let next = 256;
  return Array.from({ length: 256 }, (_, b) => String.fromCodePoint(printable(b) ? b : next++));
}

const SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"];

/**
 * A tiny byte-level BPE `tokenizer.json` in the shape Qwen2 and GPT-2 ship: 256 byte tokens,
 * five merges (ids 256-260), three added special tokens (ids 261-263).
 */
function tinyTokenizerJson(postProcessor: unknown = null) {
  const vocab: Record<string, number> = {};
  byteChars().forEach((c, b) => vocab[c] = b);
  const merges = ["h e", "l l", "he ll", "hell o", "Ġ w"];
  for (const merge of merges) vocab[merge.replace(" ", "")] = Object.keys(vocab).length;
  const byteLevel = {
    type: "ByteLevel",
    add_prefix_space: false,
    trim_offsets: true,
    use_regex: true,
  };
  return {
    version: "1.0",
    added_tokens: SPECIALS.map((content, i) => ({
      id: 261 + i,
      content,
      special: true,
      normalized: false,
      lstrip: false,
      rstrip: false,
      single_word: false,
    })),
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: postProcessor ?? byteLevel,
    decoder: byteLevel,
    model: { type: "BPE", unk_token: null, vocab, merges },
  };
}

/** A trimmed Qwen2.5 chat template (ChatML with a default system prompt). */
const CHATML = `{%- if messages[0]['role'] == 'system' %}
    {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}
{%- else %}
    {{- '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}
{%- endif %}
{%- for message in messages %}
    {%- if message.role == "user" or (message.role == "system" and not loop.first) or message.role == "assistant" %}
        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}
    {%- elif message.role != "system" %}
        {{- raise_exception('Unknown role: ' + message.role) }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\\n' }}
{%- endif %}`;

const CONFIG = {
  bos_token: null,
  eos_token: { __type: "AddedToken", content: "<|im_end|>", special: true },
  pad_token: "<|endoftext|>",
  chat_template: CHATML,
};

/** Writes a model directory with the given files (objects are written as JSON). */
async function modelDir(files: Record<string, unknown>): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "rft-tokenizer-" });
  for (const [name, content] of Object.entries(files)) {
    const text = typeof content === "string" ? content : JSON.stringify(content);
    await Deno.writeTextFile(`${dir}/${name}`, text);
  }
  return dir;
}

async function withModelDir(files: Record<string, unknown>, fn: (dir: string) => Promise<void>) {
  const dir = await modelDir(files);
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("hf tokenizer: byte-level BPE encodes with merges and decodes any text back", async () => {
  await withModelDir(
    { "tokenizer.json": tinyTokenizerJson(), "tokenizer_config.json": CONFIG },
    async (dir) => {
      const tokenizer = await loadHfTokenizer(dir);
      assertEquals(tokenizer.vocabSize, 264);
      assertEquals([tokenizer.bosId, tokenizer.eosId, tokenizer.padId], [undefined, 263, 261]);
      assertEquals(tokenizer.tokenToId("<|im_start|>"), 262);
      assertEquals(tokenizer.tokenToId("hello"), 259);
      assertEquals(tokenizer.tokenToId("nope"), undefined);
      assertEquals(tokenizer.encode("hello world"), [259, 260, 111, 114, 108, 100]);
      const text = "<|im_start|>user\nhello , world  héllo 😀<|im_end|>\n";
      const ids = tokenizer.encode(text);
      assertEquals([ids[0], ids.includes(263)], [262, true]);
      assertEquals(tokenizer.decode(ids), text, "spaces before punctuation survive");
      assertEquals(
        tokenizer.decode(ids, { skipSpecialTokens: true }),
        "user\nhello , world  héllo 😀\n",
      );
      assertEquals(tokenizer.decode([]), "");
      // Past the tokenizer (a padded model vocabulary): no text, as transformers decodes it.
      assertEquals(tokenizer.decode([259, 264, 300, 260]), tokenizer.decode([259, 260]));
      assertEquals(tokenizer.decode([264]), "");
      assertThrows(() => tokenizer.decode([1, -1]), Error, "token id -1 is not a token id");
    },
  );
});

Deno.test("hf tokenizer: special tokens from the post-processor only when asked", () => {
  const postProcessor = {
    type: "TemplateProcessing",
    single: [{ SpecialToken: { id: "<|endoftext|>", type_id: 0 } }, {
      Sequence: { id: "A", type_id: 0 },
    }],
    pair: [],
    special_tokens: {
      "<|endoftext|>": { id: "<|endoftext|>", ids: [261], tokens: ["<|endoftext|>"] },
    },
  };
  const tokenizer = new HfTokenizer("/m", tinyTokenizerJson(postProcessor), {
    bos_token: "<|endoftext|>",
  });
  assertEquals(tokenizer.encode("hello"), [259]);
  assertEquals(tokenizer.encode("hello", { addSpecialTokens: true }), [261, 259]);
  assertEquals(tokenizer.bosId, 261);
});

Deno.test("hf tokenizer: the ChatML template renders, and encodes and decodes unchanged", async () => {
  await withModelDir(
    { "tokenizer.json": tinyTokenizerJson(), "tokenizer_config.json": CONFIG },
    async (dir) => {
      const tokenizer = await loadHfTokenizer(dir);
      const messages = [{ role: "user", content: "hello world" }];
      const prompt = tokenizer.applyChatTemplate(messages, { addGenerationPrompt: true });
      assertEquals(
        prompt,
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n" +
          "<|im_start|>user\nhello world<|im_end|>\n<|im_start|>assistant\n",
      );
      const ids = tokenizer.encode(prompt);
      assertEquals(ids.filter((id) => id === 262).length, 3);
      assertEquals(tokenizer.decode(ids), prompt);
      const withSystem = tokenizer.applyChatTemplate([
        { role: "system", content: "Be brief." },
        ...messages,
        { role: "assistant", content: "hi" },
      ]);
      assertEquals(withSystem.startsWith("<|im_start|>system\nBe brief.<|im_end|>\n"), true);
      assertEquals(withSystem.endsWith("<|im_start|>assistant\nhi<|im_end|>\n"), true);
      assertThrows(
        () => tokenizer.applyChatTemplate([{ role: "tool", content: "x" }]),
        Error,
        `Cannot apply the chat template of ${dir}/tokenizer_config.json: Unknown role: tool`,
      );
    },
  );
});

Deno.test("hf tokenizer: the template comes from chat_template.jinja or a named list", async () => {
  const eos = { eos_token: "<|im_end|>" };
  const messages = [{ role: "user", content: "hi" }];
  await withModelDir({
    "tokenizer.json": tinyTokenizerJson(),
    "tokenizer_config.json": eos,
    "chat_template.jinja": "{% for m in messages %}{{ m.content }}{{ eos_token }}{% endfor %}",
  }, async (dir) => {
    assertEquals((await loadHfTokenizer(dir)).applyChatTemplate(messages), "hi<|im_end|>");
  });
  await withModelDir({
    "tokenizer.json": tinyTokenizerJson(),
    "tokenizer_config.json": {
      ...eos,
      chat_template: [{ name: "tool_use", template: "x" }, {
        name: "default",
        template: "[{{ eos_token }}]",
      }],
    },
  }, async (dir) => {
    assertEquals((await loadHfTokenizer(dir)).applyChatTemplate(messages), "[<|im_end|>]");
  });
  await withModelDir({ "tokenizer.json": tinyTokenizerJson() }, async (dir) => {
    const tokenizer = await loadHfTokenizer(dir);
    assertEquals(tokenizer.eosId, undefined);
    assertThrows(() => tokenizer.applyChatTemplate(messages), Error, `${dir} has none`);
  });
});

const HF_ERRORS: [string, Record<string, unknown>, string][] = [
  ["no tokenizer.json", { "tokenizer_config.json": CONFIG }, "tokenizer.json: file not found"],
  [
    "a tokenizer.json that is not JSON",
    { "tokenizer.json": "{" },
    "tokenizer.json: not valid JSON",
  ],
  [
    "an unknown model type",
    { "tokenizer.json": { ...tinyTokenizerJson(), model: { type: "Magic" } } },
    "tokenizer.json: Unknown TokenizerModel type: Magic",
  ],
  [
    "an eos token the vocabulary lacks",
    { "tokenizer.json": tinyTokenizerJson(), "tokenizer_config.json": { eos_token: "</s>" } },
    `tokenizer_config.json: "eos_token" is "</s>", which tokenizer.json does not define`,
  ],
  [
    "a pad token of the wrong type",
    { "tokenizer.json": tinyTokenizerJson(), "tokenizer_config.json": { pad_token: 5 } },
    `tokenizer_config.json: "pad_token" is 5; expected a string or {"content": string}`,
  ],
  [
    "a chat template with a syntax error",
    {
      "tokenizer.json": tinyTokenizerJson(),
      "tokenizer_config.json": { chat_template: "{% for %}" },
    },
    "Cannot parse the chat template of",
  ],
];

for (const [what, files, message] of HF_ERRORS) {
  Deno.test(`hf tokenizer: ${what} is a clear error`, async () => {
    await withModelDir(files, async (dir) => {
      await assertRejects(() => loadHfTokenizer(dir), Error, message);
    });
  });
}

Deno.test("char tokenizer: specials first, characters after, round trips with specials", () => {
  const tokenizer = CharTokenizer.fromText("ba\nc é😀");
  assertEquals(tokenizer.chars, "\n abcé😀");
  assertEquals(tokenizer.vocabSize, 10);
  assertEquals([tokenizer.padId, tokenizer.bosId, tokenizer.eosId, tokenizer.unkId], [
    0,
    1,
    2,
    undefined,
  ]);
  assertEquals(tokenizer.encode("a😀b"), [5, 9, 6]);
  assertEquals(tokenizer.encode("ab<eos>", { addSpecialTokens: true }), [1, 5, 6, 2]);
  assertEquals(tokenizer.decode([1, 5, 9, 6, 2]), "<bos>a😀b<eos>");
  assertEquals(tokenizer.decode([1, 5, 9, 6, 2, 0], { skipSpecialTokens: true }), "a😀b");
  assertEquals(tokenizer.tokenToId("é"), 8);
  assertThrows(
    () => tokenizer.encode("abz"),
    Error,
    `character "z" (U+007A) at index 2 is not in its vocabulary, and it has no "<unk>"`,
  );
  assertEquals(tokenizer.decode([5, 10, 6]), "ab");
  assertThrows(() => tokenizer.decode([0.5]), Error, "token id 0.5 is not a token id");
  const withUnk = new CharTokenizer("ab", ["<unk>", "<eos>"]);
  assertEquals([withUnk.encode("azb"), withUnk.bosId], [[2, 0, 3], undefined]);
});

Deno.test("char tokenizer: the built-in chat template ends each message with eos", () => {
  const tokenizer = CharTokenizer.fromText("0123456789+=");
  const prompt = tokenizer.applyChatTemplate([{ role: "user", content: "2+3=" }], {
    addGenerationPrompt: true,
  });
  assertEquals(prompt, "<bos>2+3=<eos>");
  assertEquals(tokenizer.encode(prompt), [1, 6, 3, 7, 14, 2]); // '+' sorts before '0'
});

Deno.test("char tokenizer: save and load round-trip, custom chat template included", async () => {
  await withModelDir({}, async (dir) => {
    for (
      const chatTemplate of [CHAR_CHAT_TEMPLATE, "{% for m in messages %}{{ m.role }}{% endfor %}"]
    ) {
      const tokenizer = new CharTokenizer("xyz\n", ["<pad>", "<eos>", "<sep>"], { chatTemplate });
      await tokenizer.save(`${dir}/char_tokenizer.json`);
      const loaded = await loadTokenizer(dir);
      assertEquals(loaded instanceof CharTokenizer && loaded.toJSON(), tokenizer.toJSON());
      assertEquals(loaded.encode("x<sep>z\n"), tokenizer.encode("x<sep>z\n"));
      const messages = [{ role: "xy", content: "z" }];
      assertEquals(loaded.applyChatTemplate(messages), tokenizer.applyChatTemplate(messages));
    }
    const json = JSON.parse(await Deno.readTextFile(`${dir}/char_tokenizer.json`));
    assertEquals(Object.keys(json), ["type", "chars", "special", "chat_template"]);
  });
});

const CHAR_ERRORS: [string, unknown, string][] = [
  ["the wrong type", { type: "bpe", chars: "ab" }, `"type" is "bpe"; expected "char"`],
  [
    "chars that are not text",
    { type: "char", chars: ["a"] },
    `"chars" is ["a"]; expected a string`,
  ],
  ["a repeated character", { type: "char", chars: "aba" }, `"a" appears twice in "chars"`],
  [
    "a special token that is also a character",
    { type: "char", chars: "ab", special: ["a"] },
    `"a" appears twice in "special" and "chars"`,
  ],
  [
    "specials that are not text",
    { type: "char", chars: "ab", special: "<eos>" },
    `"special" is "<eos>"`,
  ],
  [
    "a bad template",
    { type: "char", chars: "ab", chat_template: "{% if %}" },
    "Cannot parse the chat template",
  ],
];

for (const [what, json, message] of CHAR_ERRORS) {
  Deno.test(`char tokenizer: a file with ${what} is rejected`, async () => {
    await withModelDir({ "char_tokenizer.json": json }, async (dir) => {
      const path = `${dir}/char_tokenizer.json`;
      await assertRejects(() => loadCharTokenizer(path), Error, message);
      await assertRejects(() => loadCharTokenizer(path), Error, path);
    });
  });
}

Deno.test("loadTokenizer: picks HF or char by file, and names both when neither is there", async () => {
  await withModelDir({ "tokenizer.json": tinyTokenizerJson() }, async (dir) => {
    assertEquals((await loadTokenizer(dir)) instanceof HfTokenizer, true);
  });
  await withModelDir({}, async (dir) => {
    await assertRejects(
      () => loadTokenizer(dir),
      Error,
      `Cannot load a tokenizer from ${dir}: found neither tokenizer.json nor char_tokenizer.json`,
    );
  });
});

Deno.test("hf tokenizer: Qwen's padded vocabulary rows decode to no text", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await writeQwenConfigAndTokenizer(dir);
    const tokenizer = await loadTokenizer(dir);
    const modelVocab = TINY_QWEN_CONFIG.vocab_size; // 151936, as Qwen2.5's config.json says
    if (!(tokenizer.vocabSize < modelVocab)) {
      throw new Error(
        `expected fewer tokens than ${modelVocab} rows, found ${tokenizer.vocabSize}`,
      );
    }
    const ids = tokenizer.encode("The answer is 42.");
    const padded = [...ids.slice(0, 2), modelVocab - 1, tokenizer.vocabSize, ...ids.slice(2)];
    assertEquals(tokenizer.decode(padded), "The answer is 42.");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** A word-level `tokenizer.json` (whitespace split) whose model names `unk` as its unknown token. */
function wordLevelJson(vocab: Record<string, number>, unk: string | null) {
  return {
    version: "1.0",
    added_tokens: [],
    normalizer: null,
    pre_tokenizer: { type: "Whitespace" },
    post_processor: null,
    decoder: null,
    model: { type: "WordLevel", vocab, unk_token: unk },
  };
}

Deno.test("hf tokenizer: a word outside the vocabulary is the unknown token, as the tokenizer defines", () => {
  const withUnk = new HfTokenizer(
    "wl",
    wordLevelJson({ hello: 0, world: 1, "[UNK]": 2 }, "[UNK]"),
    {},
  );
  assertEquals(withUnk.encode("hello zzz world"), [0, 2, 1]);
  // An unknown token the vocabulary lacks is no id: bad input naming the piece, not an undefined.
  const noUnk = new HfTokenizer("wl", wordLevelJson({ hello: 0, world: 1 }, "[UNK]"), {});
  assertEquals(noUnk.encode("hello world"), [0, 1]);
  assertThrows(
    () => noUnk.encode("hello zzz"),
    Error,
    'Cannot encode "zzz": the tokenizer of wl has no token for it and defines no unknown token',
  );
});
