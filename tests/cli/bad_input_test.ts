/**
 * `./rft run` as a subprocess on bad input, each case copied from a working fixture and broken
 * one way: a plugin with a syntax error or a missing import, a component the config names
 * wrongly (unknown workflow, a `workflow_args` key no workflow reads), a truncated
 * `model.safetensors`, a `config.json` whose hidden_size disagrees with the weights, a garbage
 * `tokenizer.json` / `char_tokenizer.json`, a taskset that is not parquet, of the wrong
 * extension, with no usable row (its prompts included: the tokenizer must encode them) or no file
 * for its split, an sqlite taskset without its table, an SFT dataset of no usable row, a dpo
 * stage without its keys. Each is one line on stderr naming the file or key, no stack, code
 * frame or colour codes, and exit code 2; the taskset and dataset cases make no run directory.
 */

import { DatabaseSync } from "node:sqlite";
import { parameterSpecs } from "../../src/model/parameters.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { writeSafetensors } from "../../src/model/safetensors.ts";
import { InputError, isInputError, oneLineMessage } from "../../src/util/input_error.ts";
import { assertEquals } from "../_asserts.ts";
import { runRft } from "../_rft_cli.ts";
import { type Fixture, makeFixture, withFixture } from "../run/_fixture.ts";

/** Runs `./rft run` with `args`; stdout and stderr are pipes (not terminals). */
const rftRun = (args: string[]) => runRft(["run", ...args]);

/**
 * Asserts `./rft run` exits 2 with one stderr line (after the run's own progress lines, which
 * start with a lower-case word and no "rft run:") that contains each of `parts`.
 */
async function assertBadInput(args: string[], parts: string[]) {
  const { code, stderr } = await rftRun(args);
  const lines = stderr.trimEnd().split("\n");
  const errors = lines.filter((l) => l.startsWith("rft run: "));
  assertEquals(errors.length, 1, `one error line in:\n${stderr}`);
  const [line] = errors;
  assertEquals(lines.at(-1), line, `the error line is the last:\n${stderr}`);
  for (const part of parts) assertEquals(line.includes(part), true, `"${part}" in: ${line}`);
  assertEquals(stderr.includes("\x1b["), false, `no colour codes in:\n${stderr}`);
  assertEquals(/^\s+at |^\s*\|/m.test(stderr), false, `no stack or code frame in:\n${stderr}`);
  assertEquals(code, 2, stderr);
}

/** A fixture whose model has real weights (`model.safetensors`), not `from_scratch`. */
async function withWeights(fn: (f: Fixture, config: string) => Promise<void>) {
  const f = await makeFixture();
  try {
    const raw = JSON.parse(await Deno.readTextFile(`${f.dir}/model/config.json`));
    const tensors = parameterSpecs(parseHfConfig(raw)).map((spec) => ({
      name: spec.name,
      shape: spec.shape,
      data: new Float32Array(spec.shape.reduce((a, b) => a * b, 1)).fill(0.01),
    }));
    await writeSafetensors(`${f.dir}/model/model.safetensors`, tensors);
    const config = await f.writeConfig({
      model: { from_scratch: false },
      buffer: { total_steps: 1 },
    });
    await fn(f, config);
  } finally {
    await f.remove();
  }
}

Deno.test("bad input: plugins with a syntax error or a missing import are one line, exit 2", async () => {
  const f = await makeFixture();
  try {
    const config = await f.writeConfig();
    await Deno.mkdir(`${f.dir}/syntax`);
    await Deno.writeTextFile(`${f.dir}/syntax/bad.ts`, "export const x = ;\n");
    await assertBadInput(["--plugin-dir", `${f.dir}/syntax`, config], [
      `Cannot load plugin ${f.dir}/syntax/bad.ts`,
      "Expression expected",
      "bad.ts:1:",
    ]);
    await Deno.mkdir(`${f.dir}/missing`);
    await Deno.writeTextFile(`${f.dir}/missing/imports.ts`, 'import "./nowhere.ts";\n');
    await assertBadInput(["--plugin-dir", `${f.dir}/missing`, config], [
      `Cannot load plugin ${f.dir}/missing/imports.ts`,
      "nowhere.ts",
    ]);
  } finally {
    await f.remove();
  }
});

Deno.test("bad input: an unknown workflow and an unknown workflow_args key exit 2 before any stage", async () => {
  const f = await makeFixture();
  try {
    const unknown = await f.writeConfig({
      buffer: { explorer_input: { default_workflow_type: "math_boxed" } },
    }, "unknown.yaml");
    await assertBadInput([unknown], [
      "buffer.explorer_input.taskset.default_workflow_type",
      'Unknown workflow "math_boxed"',
    ]);
    const badArg = await f.writeConfig({
      buffer: { explorer_input: { taskset: { workflow_args: { use_bse: true } } } },
    }, "bad_arg.yaml");
    await assertBadInput([badArg], [
      "buffer.explorer_input.taskset.workflow_args",
      'unknown key "use_bse"',
    ]);
    await assertEquals(
      await Array.fromAsync(Deno.readDir(f.dir)).then((e) => e.some((x) => x.name === "runs")),
      false,
      "no run directory was made",
    );
  } finally {
    await f.remove();
  }
});

Deno.test("bad input: a truncated model.safetensors and a config.json that disagrees with it", async () => {
  await withWeights(async (f, config) => {
    const weights = `${f.dir}/model/model.safetensors`;
    const whole = await Deno.readFile(weights);
    await Deno.writeFile(weights, whole.subarray(0, Math.floor(whole.length / 2)));
    await assertBadInput([config], [weights, "truncated"]);
    await Deno.writeFile(weights, whole);
    const raw = JSON.parse(await Deno.readTextFile(`${f.dir}/model/config.json`));
    await Deno.writeTextFile(
      `${f.dir}/model/config.json`,
      JSON.stringify({ ...raw, hidden_size: 32, intermediate_size: 64 }),
    );
    await assertBadInput([config], [`${f.dir}/model`, "has shape", "config.json implies"]);
  });
});

Deno.test("bad input: a garbage char_tokenizer.json or tokenizer.json", async () => {
  const f = await makeFixture();
  try {
    const config = await f.writeConfig({ buffer: { total_steps: 1 } });
    await Deno.writeTextFile(`${f.dir}/model/char_tokenizer.json`, "{ not json");
    await assertBadInput([config], [`${f.dir}/model/char_tokenizer.json`]);
    await Deno.remove(`${f.dir}/model/char_tokenizer.json`);
    await Deno.writeTextFile(`${f.dir}/model/tokenizer.json`, '{"model": 7}');
    await assertBadInput([config], [`${f.dir}/model/tokenizer.json`]);
  } finally {
    await f.remove();
  }
});

Deno.test("bad input: a taskset that is not parquet", async () => {
  const f = await makeFixture();
  try {
    await Deno.writeTextFile(`${f.dir}/data/train.parquet`, "prompt,answer\n1+1=,2\n");
    const config = await f.writeConfig({
      buffer: { total_steps: 1, explorer_input: { taskset: { path: "./data/train.parquet" } } },
    });
    await assertBadInput([config], [`${f.dir}/data/train.parquet`, "parquet"]);
  } finally {
    await f.remove();
  }
});

/** Asserts `dir` holds no `runs/` folder: the run stopped before making its run directory. */
async function assertNoRunDir(dir: string) {
  const names = await Array.fromAsync(Deno.readDir(dir), (e) => e.name);
  assertEquals(names.includes("runs"), false, `no run directory in ${dir}: ${names.join(", ")}`);
}

/**
 * Asserts `./rft run` exits 2 on a config whose taskset is `<dir>/data/<name>` holding `text`,
 * with one line naming the file and holding each of `parts`.
 */
async function assertBadTaskset(f: Fixture, name: string, text: string, parts: string[]) {
  await Deno.writeTextFile(`${f.dir}/data/${name}`, text);
  const config = await f.writeConfig({
    buffer: { total_steps: 1, explorer_input: { taskset: { path: `./data/${name}` } } },
  }, `${name}.yaml`);
  await assertBadInput([config], [`${f.dir}/data/${name}`, ...parts]);
}

Deno.test("bad input: a taskset of the wrong extension, of no usable row, or with no file for its split", async () => {
  await withFixture(async (f) => {
    await assertBadTaskset(f, "train.csv", "prompt,answer\n1+1=,2\n", [
      ".jsonl or .parquet",
      '".csv"',
    ]);
    await assertBadTaskset(f, "keyless.jsonl", '{"question": "1+1="}\n[1, 2]\n', [
      "no usable rows",
      "2 skipped",
      'line 1: Task row has no "prompt"',
    ]);
    await Deno.mkdir(`${f.dir}/hub/main`, { recursive: true });
    await Deno.writeTextFile(`${f.dir}/hub/main/test-00000-of-00001.jsonl`, "{}\n");
    const noSplit = await f.writeConfig({
      buffer: {
        total_steps: 1,
        explorer_input: { taskset: { path: "./hub", subset_name: "main" } },
      },
    }, "no_split.yaml");
    await assertBadInput([noSplit], [
      `${f.dir}/hub`,
      'no file of split "train" of subset "main"',
      "main/test-00000-of-00001.jsonl",
    ]);
    await assertNoRunDir(f.dir);
  });
});

/** Config overrides of a one-step `mode: train` run of `algorithm`. */
const trainOnly = (algorithm: string) => ({
  mode: "train",
  algorithm: { algorithm_type: algorithm },
  buffer: { total_steps: 1 },
});

Deno.test("bad input: an sft dataset of no usable row and a dpo stage without chosen_key", async () => {
  await withFixture(async (f) => {
    await Deno.writeTextFile(`${f.dir}/data/sft.jsonl`, '{"prompt": "1+1="}\n');
    const sft = await f.writeConfig(trainOnly("sft"), "sft.yaml");
    await assertBadInput([sft], [
      "buffer.trainer_input.sft_warmup_dataset",
      `${f.dir}/data/sft.jsonl`,
      "no usable rows",
      'has no "answer"',
    ]);
    const dpo = await f.writeConfig(trainOnly("dpo"), "dpo.yaml");
    await assertBadInput([dpo], ["trains dpo", "needs chosen_key and rejected_key"]);
    await assertNoRunDir(f.dir);
  });
});

Deno.test("bad input: a taskset whose every prompt the tokenizer cannot encode", async () => {
  await withFixture(async (f) => {
    // The fixture's char tokenizer knows "0123456789+=" only.
    await assertBadTaskset(f, "words.jsonl", '{"prompt": "one+1=", "answer": "2"}\n', [
      "no usable rows",
      "line 1: the tokenizer cannot encode its prompt",
    ]);
    await assertNoRunDir(f.dir);
  });
});

Deno.test("bad input: an sqlite taskset without the table its name names", async () => {
  await withFixture(async (f) => {
    const db = new DatabaseSync(`${f.dir}/tasks.db`);
    db.exec("CREATE TABLE gsm8k (id INTEGER PRIMARY KEY, raw_task JSON NOT NULL)");
    db.close();
    const config = await f.writeConfig({
      buffer: {
        total_steps: 1,
        explorer_input: {
          taskset: { name: "math", storage_type: "sql", path: "sqlite:///tasks.db" },
        },
      },
    }, "sql.yaml");
    await assertBadInput([config], [
      `Cannot read sqlite table "math" of ${f.dir}/tasks.db`,
      'found tables "gsm8k"',
    ]);
    await assertNoRunDir(f.dir);
  });
});

Deno.test("bad input: InputError survives wrapping; messages become one line without colour", () => {
  const source = new InputError("Cannot load model.safetensors: file is truncated");
  assertEquals(isInputError(source), true);
  assertEquals(isInputError(new Error("stage main failed", { cause: source })), true);
  assertEquals(isInputError(new Error("out of memory")), false);
  assertEquals(isInputError("a string"), false);
  const frame = "SyntaxError: Expression expected\n  |\n1 | const x = ;\n  |           ~\n" +
    "    at \x1b[36mfile:///p/bad.ts\x1b[0m:\x1b[33m1\x1b[0m:\x1b[33m11\x1b[0m";
  assertEquals(
    oneLineMessage(new Error(frame)),
    "SyntaxError: Expression expected (at file:///p/bad.ts:1:11)",
  );
  assertEquals(oneLineMessage(new Error("one line")), "one line");
});
