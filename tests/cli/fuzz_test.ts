/**
 * Every `rft` subcommand driven with plausible mistakes on the command line, as subprocesses:
 * unknown and misspelled flags, flags missing their value, switches given one, numbers that are
 * not (words, fractions, negative numbers, out of range), stray arguments, and odd prompts
 * (empty, characters the tokenizer lacks, longer than the model). Each must end in exactly one
 * line on stderr, `rft <command>: ...` (no stack trace, no code frame, no colour codes), nothing
 * on stdout, and exit code 2 (`_fuzz_fixture.ts`). Mistakes in files, configs and ports are
 * `fuzz_files_test.ts`'s. Also the two cases that are no mistake: a `--max-tokens` past the
 * model's positions is lowered with a note, and a word the tokenizer maps to its unknown token
 * generates.
 */

import { assertEquals } from "../_asserts.ts";
import { runRft } from "../_rft_cli.ts";
import { checkAll, type FuzzCase, makeFixture } from "./_fuzz_fixture.ts";

/** Mistakes on the command line, per subcommand. */
function cases(d: string): FuzzCase[] {
  const char = ["--model", `${d}/char`];
  const gen = (...args: string[]) => ["generate", ...char, "--prompt", "1", ...args];
  const serve = (...args: string[]) => ["serve", ...char, ...args];
  return [
    // The command line itself.
    [["frobnicate"], 'unknown command "frobnicate"'],
    [["gnerate"], 'did you mean "generate"'],
    [["--verbose"], 'unknown command "--verbose"'],
    // run
    [["run"], "expected one config file, received none"],
    [["run", "a.yaml", "b.yaml"], 'expected one config file, received "a.yaml", "b.yaml"'],
    [["run", "--sett", "x=1", `${d}/ok.yaml`], 'did you mean "--set"'],
    [["run", "--set", "no_equals_sign", `${d}/ok.yaml`], "no_equals_sign"],
    [["run", "--set"], "--set needs a value"],
    [["run", `${d}/ok.yaml`, "--set", "buffer.total_steps=-5"], "expected an integer >= 1"],
    [["run", `${d}/ok.yaml`, "--set", "buffer.total_steps=many"], 'found "many"'],
    [["run", `${d}/ok.yaml`, "--set", "buffer.batch_size=2.5"], "buffer.batch_size"],
    [["run", `${d}/ok.yaml`, "--set", "algorithm.optimizer.lr=fast"], "expected a number"],
    [["run", `${d}/ok.yaml`, "--set", "stages[3].mode=train"], "stages[3]"],
    [["run", `${d}/ok.yaml`, "--set", "mode=trian"], 'Did you mean "train"'],
    [["run", `${d}/ok.yaml`, "--set", "buffer.total_stepz=3"], "total_stepz"],
    [["run", `${d}/ok.yaml`, "--set", "model.model_path=./nowhere"], "nowhere"],
    // generate
    [["generate", "--prompt", "1+2="], "--model DIR is required"],
    [["generate", ...char], "at least one --prompt"],
    [["generate", "--model=", "--prompt", "1"], "--model DIR is required"],
    [gen("--n", "two"), '--n: expected an integer >= 1, received "two"'],
    [gen("--n", "-3"), '--n: expected an integer >= 1, received "-3"'],
    [gen("--n", "0"), "--n: expected an integer >= 1"],
    [gen("--temperature", "-1"), '--temperature: expected a number >= 0, received "-1"'],
    [gen("--temperature", "NaN"), "--temperature"],
    [gen("--temperature", "1e400"), "--temperature"],
    [gen("--top-p", "1.5"), "--top-p"],
    [gen("--top-p", "0"), "--top-p"],
    [gen("--top-k", "2.5"), "--top-k: expected an integer"],
    [gen("--top-k", "-2"), "--top-k: expected an integer >= 0"],
    // Numbers of the output's size and the sampler's seed.
    [gen("--max-tokens", "0"), "--max-tokens"],
    [gen("--max-tokens", ""), "--max-tokens"],
    [gen("--max-tokens", "ten"), "--max-tokens"],
    [gen("--seed", "1.5"), "--seed"],
    [gen("--seed", "-1"), '--seed: expected an integer >= 0, received "-1"'],
    // Switches given values, stray and misspelled arguments.
    [gen("--chat=yes"), "--chat is a switch"],
    [gen("--logprobs=1"), "--logprobs is a switch"],
    [gen("stray"), 'unexpected argument "stray"'],
    [gen("--temprature", "0"), 'did you mean "--temperature"'],
    [gen("-t", "0"), "unknown flag -t"],
    [["generate", ...char, "--prompt"], "--prompt needs a value"],
    [["generate", ...char, "--prompt", ""], "encodes to no tokens"],
    [["generate", ...char, "--prompt", "1+ü="], 'character "ü"'],
    [["generate", ...char, "--prompt", "😀"], "not in its vocabulary"],
    [["generate", ...char, "--prompt", "1+2\t="], "not in its vocabulary"],
    [["generate", ...char, "--prompt", "1+2=".repeat(5)], "no token is left to generate"],
    [["generate", ...char, "--prompt", "1", "--prompt", "1+2=".repeat(5)], "--prompt 2 has"],
    // info
    [["info", "--bogus"], "unknown flag --bogus"],
    [["info", "extra"], 'unexpected argument "extra"'],
    [["info", "--no-self-check=yes"], "--no-self-check is a switch"],
    // plot
    [["plot"], "expected one RUN_DIR, received none"],
    [["plot", `${d}/empty_dir`, "--out"], "--out needs a value"],
    [["plot", `${d}/empty_dir`, `${d}/char`], "expected one RUN_DIR"],
    [["plot", "--ot", "x.html", `${d}/empty_dir`], 'did you mean "--out"'],
    // export
    [["export", ...char], "exactly one of --onnx FILE or --transformers-js DIR"],
    [["export", "--onnx", `${d}/x.onnx`, "--transformers-js", `${d}/t`, ...char], "exactly one"],
    [["export", "--onnx", `${d}/x.onnx`], "--model DIR is required"],
    [["export", "--transformers-js", `${d}/t`, "--no-attention-mask", ...char], "--onnx only"],
    [["export", "--onx", `${d}/x.onnx`, ...char], 'did you mean "--onnx"'],
    [["export", "--onnx", `${d}/x.onnx`, "--fp16=true", ...char], "--fp16 is a switch"],
    [["export", "--onnx", `${d}/x.onnx`, ...char, "extra"], 'unexpected argument "extra"'],
    // serve
    [["serve"], "--model DIR is required"],
    [serve("--port", "http"), "--port"],
    [serve("--port", "-1"), '--port: expected an integer >= 0, received "-1"'],
    [serve("--port", "80.5"), "--port: expected an integer"],
    [serve("--max-n", "0"), "--max-n"],
    // Defaults of requests.
    [serve("--max-tokens", "-3"), "--max-tokens: expected an integer >= 1"],
    [serve("--temperature", "hot"), "--temperature"],
    [serve("--seed", "x"), "--seed"],
    [serve("--api-key"), "--api-key needs a value"],
    [serve("--tool-call-parser", "bogus"), 'tool call parser "bogus"'],
    [serve("--prot", "8000"), 'did you mean "--port"'],
  ];
}

Deno.test("rft fuzz: every subcommand's bad flags, numbers and prompts are one line, exit 2", async () => {
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
