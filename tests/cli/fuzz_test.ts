/**
 * Every `rft` subcommand driven with plausible mistakes, as subprocesses: unknown and misspelled
 * flags, flags missing their value, switches given one, numbers that are not, stray arguments,
 * missing or wrong files and directories, unwritable outputs, and odd prompts (empty, characters
 * the tokenizer lacks, longer than the model). Each must end in exactly one line on stderr,
 * `rft <command>: ...` (no stack trace, no code frame, no colour codes), nothing on stdout, and
 * exit code 2. Also the two cases that are no mistake: a `--max-tokens` past the model's
 * positions is lowered with a note, and a word the tokenizer maps to its unknown token generates.
 */

import { stringify } from "yaml";
import { assertEquals } from "../_asserts.ts";
import { runRft } from "../_rft_cli.ts";
import { CharTokenizer } from "../../src/model/char_tokenizer.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { initParameters } from "../../src/model/init.ts";
import { createModel } from "../../src/model/policy.ts";
import { tinyLlamaConfig } from "../_tiny_llama.ts";

/** A fixture: a saved char model of 16 positions, a word-level HF one, files of every kind. */
async function makeFixture(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "rft-fuzz-" });
  const tokenizer = CharTokenizer.fromText("ab+=0123456789");
  const raw = tinyLlamaConfig(tokenizer.vocabSize, {
    max_position_embeddings: 16,
    eos_token_id: tokenizer.eosId,
  });
  const model = await createModel(raw, initParameters(parseHfConfig(raw), 5, 0.5), { tokenizer });
  await model.save(`${dir}/char`);
  await model.save(`${dir}/words`);
  model.destroy();
  await Deno.remove(`${dir}/words/char_tokenizer.json`);
  const vocab = Object.fromEntries(
    ["<pad>", "<bos>", "<eos>", "[UNK]", "one", "two", "plus", "is"].map((w, i) => [w, i]),
  );
  await Deno.writeTextFile(
    `${dir}/words/tokenizer.json`,
    JSON.stringify({
      version: "1.0",
      added_tokens: [],
      normalizer: null,
      pre_tokenizer: { type: "Whitespace" },
      post_processor: null,
      decoder: { type: "WordPiece", prefix: "##", cleanup: false },
      model: { type: "WordLevel", vocab, unk_token: "[UNK]" },
    }),
  );
  await Deno.writeTextFile(`${dir}/words/tokenizer_config.json`, '{"eos_token": "<eos>"}');
  await Deno.writeTextFile(`${dir}/garbage.yaml`, "model: [unclosed\n  - : :\n");
  await Deno.writeTextFile(`${dir}/empty.yaml`, "");
  await Deno.writeTextFile(`${dir}/list.yaml`, "- a\n- b\n");
  await Deno.writeTextFile(
    `${dir}/unknown_key.yaml`,
    stringify({ model: { model_path: "./char" }, buffer: { total_stepz: 3 } }),
  );
  await Deno.writeTextFile(`${dir}/a_file`, "not a directory\n");
  await Deno.mkdir(`${dir}/empty_dir`);
  await Deno.writeTextFile(`${dir}/empty_dir/metrics.jsonl`, "not json\n");
  return dir;
}

/** Each case: the arguments, and what its one error line should contain. */
function cases(d: string): [string[], string][] {
  const char = ["--model", `${d}/char`];
  return [
    // The command line itself.
    [["frobnicate"], 'unknown command "frobnicate"'],
    [["gnerate"], 'did you mean "generate"'],
    // run
    [["run"], "expected one config file, received none"],
    [["run", "a.yaml", "b.yaml"], 'expected one config file, received "a.yaml", "b.yaml"'],
    [["run", "--sett", "x=1", `${d}/unknown_key.yaml`], 'did you mean "--set"'],
    [["run", `${d}/missing.yaml`], "missing.yaml"],
    [["run", `${d}/empty_dir`], "empty_dir"],
    [["run", `${d}/garbage.yaml`], "garbage.yaml"],
    [["run", `${d}/empty.yaml`], "empty.yaml"],
    [["run", `${d}/list.yaml`], "list.yaml"],
    [["run", `${d}/unknown_key.yaml`], "total_stepz"],
    [["run", "--set", "no_equals_sign", `${d}/unknown_key.yaml`], "no_equals_sign"],
    [["run", "--plugin-dir", `${d}/no_plugins`, `${d}/unknown_key.yaml`], "no_plugins"],
    [["run", "--set"], "--set needs a value"],
    // generate
    [["generate", "--prompt", "1+2="], "--model DIR is required"],
    [["generate", ...char], "at least one --prompt"],
    [["generate", "--model", `${d}/nowhere`, "--prompt", "1"], "no such file or directory"],
    [["generate", "--model", `${d}/a_file`, "--prompt", "1"], "expected a directory"],
    [["generate", "--model", `${d}/empty_dir`, "--prompt", "1"], "found none of these"],
    [
      ["generate", ...char, "--prompt", "1", "--n", "two"],
      '--n: expected an integer >= 1, received "two"',
    ],
    [["generate", ...char, "--prompt", "1", "--temperature", "-1"], "--temperature"],
    [["generate", ...char, "--prompt", "1", "--top-p", "1.5"], "--top-p"],
    [["generate", ...char, "--prompt", "1", "--max-tokens", "0"], "--max-tokens"],
    [["generate", ...char, "--prompt", "1", "--seed", "1.5"], "--seed"],
    [["generate", ...char, "--prompt", "1", "--chat=yes"], "--chat is a switch"],
    [["generate", ...char, "--prompt"], "--prompt needs a value"],
    [["generate", ...char, "--prompt", "1", "stray"], 'unexpected argument "stray"'],
    [["generate", ...char, "--prompt", ""], "encodes to no tokens"],
    [["generate", ...char, "--prompt", "1+ü="], 'character "ü"'],
    [["generate", ...char, "--prompt", "😀"], "not in its vocabulary"],
    [["generate", ...char, "--prompt", "1+2=".repeat(5)], "no token is left to generate"],
    // info
    [["info", "--bogus"], "unknown flag --bogus"],
    // plot
    [["plot"], "expected one RUN_DIR, received none"],
    [["plot", `${d}/nowhere`], "the directory does not exist"],
    [["plot", `${d}/a_file`], "it is not a directory"],
    [["plot", `${d}/char`], "it has no metrics.jsonl"],
    [["plot", `${d}/empty_dir`], "has no readable rows"],
    [["plot", `${d}/empty_dir`, "--out"], "--out needs a value"],
    // export
    [["export", ...char], "exactly one of --onnx FILE or --transformers-js DIR"],
    [["export", "--onnx", `${d}/x.onnx`, "--transformers-js", `${d}/t`, ...char], "exactly one"],
    [["export", "--onnx", `${d}/x.onnx`], "--model DIR is required"],
    [["export", "--onnx", `${d}/x.onnx`, "--model", `${d}/nowhere`], "no such file"],
    [["export", "--onnx", `${d}/a_file/x.onnx`, ...char], "a_file"],
    [["export", "--transformers-js", `${d}/t`, "--no-attention-mask", ...char], "--onnx only"],
    [["export", "--onx", `${d}/x.onnx`, ...char], 'did you mean "--onnx"'],
    // serve
    [["serve"], "--model DIR is required"],
    [["serve", "--model", `${d}/nowhere`], "no such file"],
    [["serve", ...char, "--port", "http"], "--port"],
    [["serve", ...char, "--max-n", "0"], "--max-n"],
    [["serve", ...char, "--temperature", "hot"], "--temperature"],
    [["serve", ...char, "--max-prompt-tokens", "64"], "positions"],
    [["serve", ...char, "--port", "70000"], "cannot listen"],
    [["serve", ...char, "--api-key"], "--api-key needs a value"],
  ];
}

/** Runs `cases` two at a time (each is a process), asserting each one's single line. */
async function checkAll(all: [string[], string][]) {
  const queue = [...all];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const [args, expected] = next;
      const { code, stdout, stderr } = await runRft(args);
      const what = `./rft ${args.join(" ")}\nstdout: ${stdout}\nstderr: ${stderr}`;
      const lines = stderr.trimEnd().split("\n");
      assertEquals(lines.length, 1, `one line: ${what}`);
      const command = args[0] === "frobnicate" || args[0] === "gnerate" ? "" : ` ${args[0]}`;
      assertEquals(lines[0].startsWith(`rft${command}: `), true, what);
      assertEquals(lines[0].includes(expected), true, `"${expected}" in: ${what}`);
      assertEquals(stderr.includes("\x1b["), false, `no colour codes: ${what}`);
      assertEquals(/^\s+at /m.test(stderr), false, `no stack: ${what}`);
      assertEquals(stdout, "", what);
      assertEquals(code, 2, what);
    }
  };
  await Promise.all([worker(), worker()]);
}

Deno.test("rft fuzz: every subcommand's bad flags, files and prompts are one line, exit 2", async () => {
  const dir = await makeFixture();
  try {
    await checkAll(cases(dir));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("rft generate lowers --max-tokens to the model's positions with a note; an unknown word is the tokenizer's [UNK]", async () => {
  const dir = await makeFixture();
  try {
    const generate = (model: string, prompt: string, flag: string, value: string) =>
      runRft(["generate", "--model", `${dir}/${model}`, "--prompt", prompt, flag, value]);
    const long = await generate("char", "12+34=", "--temperature", "0");
    assertEquals(long.code, 0, long.stderr);
    assertEquals(
      long.stderr.includes(
        "note: --max-tokens 64 (the default) is more than the model's 16 positions leave after a 6-token prompt; generating at most 10",
      ),
      true,
      long.stderr,
    );
    assertEquals(/\((stop|length), \d+ tokens\)/.test(long.stdout), true, long.stdout);
    const words = await generate("words", "one plus zebra is", "--max-tokens", "2");
    assertEquals(words.code, 0, words.stderr);
    assertEquals(words.stdout.includes("one plus zebra is"), true, words.stdout);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
