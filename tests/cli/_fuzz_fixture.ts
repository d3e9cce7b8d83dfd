/**
 * Shared fixture of the CLI fuzz tests: a temporary directory with a saved char model of 16
 * positions, a word-level HF one, broken model directories, configs and datasets of every kind
 * a newcomer gets wrong, and the runner that checks each case's single line.
 */

import { stringify } from "yaml";
import { assertEquals } from "../_asserts.ts";
import { runRft } from "../_rft_cli.ts";
import { CharTokenizer } from "../../src/model/char_tokenizer.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { initParameters } from "../../src/model/init.ts";
import { createModel } from "../../src/model/policy.ts";
import { tinyLlamaConfig } from "../_tiny_llama.ts";

/** A case: the arguments of `./rft`, and what its one error line must contain. */
export type FuzzCase = [string[], string];

/** The word-level HF tokenizer of the `words` model: "zebra" is its [UNK]. */
function wordTokenizerJson(): string {
  const vocab = Object.fromEntries(
    ["<pad>", "<bos>", "<eos>", "[UNK]", "one", "two", "plus", "is"].map((w, i) => [w, i]),
  );
  return JSON.stringify({
    version: "1.0",
    added_tokens: [],
    normalizer: null,
    pre_tokenizer: { type: "Whitespace" },
    post_processor: null,
    decoder: { type: "WordPiece", prefix: "##", cleanup: false },
    model: { type: "WordLevel", vocab, unk_token: "[UNK]" },
  });
}

/** Model directories: `char`, `words`, and broken ones (no weights, no tokenizer, ...). */
async function writeModels(dir: string): Promise<void> {
  const tokenizer = CharTokenizer.fromText("ab+=0123456789");
  const raw = tinyLlamaConfig(tokenizer.vocabSize, {
    max_position_embeddings: 16,
    eos_token_id: tokenizer.eosId,
  });
  const model = await createModel(raw, initParameters(parseHfConfig(raw), 5, 0.5), { tokenizer });
  for (const name of ["char", "words", "no_tokenizer", "bad_config", "truncated"]) {
    await model.save(`${dir}/${name}`);
  }
  model.destroy();
  await Deno.remove(`${dir}/words/char_tokenizer.json`);
  await Deno.writeTextFile(`${dir}/words/tokenizer.json`, wordTokenizerJson());
  await Deno.writeTextFile(`${dir}/words/tokenizer_config.json`, '{"eos_token": "<eos>"}');
  await Deno.remove(`${dir}/no_tokenizer/char_tokenizer.json`);
  await Deno.writeTextFile(`${dir}/bad_config/config.json`, '{"model_type": "llama", ');
  const weights = await Deno.readFile(`${dir}/truncated/model.safetensors`);
  await Deno.writeFile(`${dir}/truncated/model.safetensors`, weights.slice(0, 100));
  await Deno.mkdir(`${dir}/no_weights`);
  for (const file of ["config.json", "char_tokenizer.json"]) {
    await Deno.copyFile(`${dir}/char/${file}`, `${dir}/no_weights/${file}`);
  }
}

/** A run config over the `char` model and `tasks.jsonl`, with `extra` on top. */
function runConfig(extra: Record<string, unknown>): string {
  return stringify({
    project: "fuzz",
    name: "run",
    model: { model_path: "./char", max_prompt_tokens: 6, max_response_tokens: 4 },
    buffer: {
      batch_size: 2,
      total_steps: 1,
      explorer_input: {
        taskset: {
          path: "./tasks.jsonl",
          format: { prompt_key: "prompt", response_key: "answer" },
        },
      },
    },
    ...extra,
  });
}

/** Configs: unreadable, of the wrong shape, for the wrong mode, over bad datasets. */
async function writeConfigs(dir: string): Promise<void> {
  const files: Record<string, string | Uint8Array> = {
    "garbage.yaml": "model: [unclosed\n  - : :\n",
    "empty.yaml": "",
    "list.yaml": "- a\n- b\n",
    "not_utf8.yaml": new Uint8Array([0x70, 0x3a, 0x20, 0x0a, 0xff, 0xfe, 0x0a]),
    "unknown_key.yaml": stringify({ model: { model_path: "./char" }, buffer: { total_stepz: 3 } }),
    "tasks.jsonl": '{"prompt": "1+2=", "answer": "3"}\n{"prompt": "2+2=", "answer": "4"}\n',
    "empty.jsonl": "",
    "wrong_keys.jsonl": '{"question": "1+2=", "solution": "3"}\n',
    "not_utf8.jsonl": new Uint8Array([...new TextEncoder().encode('{"prompt": "1"}\n'), 0xc3]),
    "ok.yaml": runConfig({}),
    "bench_no_eval.yaml": runConfig({ mode: "bench" }),
    "explore_sft.yaml": runConfig({
      mode: "explore",
      algorithm: { algorithm_type: "sft" },
      buffer: { batch_size: 2, total_steps: 1 },
    }),
    "train_no_experiences.yaml": runConfig({ mode: "train" }),
    "sft_no_dataset.yaml": runConfig({ mode: "train", algorithm: { algorithm_type: "sft" } }),
    // No default_workflow_type: math_workflow, whose system prompt the char model cannot encode.
    "default_workflow.yaml": runConfig({}),
    "a_file": "not a directory\n",
  };
  const tasksets = {
    empty_taskset: "./empty.jsonl",
    wrong_keys: "./wrong_keys.jsonl",
    taskset_not_utf8: "./not_utf8.jsonl",
    taskset_dir: "./empty_dir",
  };
  for (const [name, tasks] of Object.entries(tasksets)) {
    files[`${name}.yaml`] = runConfig({}).replace("./tasks.jsonl", tasks);
  }
  files["model_is_file.yaml"] = runConfig({}).replace("./char", "./a_file");
  files["model_no_tokenizer.yaml"] = runConfig({}).replace("./char", "./no_tokenizer");
  for (const [name, content] of Object.entries(files)) {
    if (typeof content === "string") await Deno.writeTextFile(`${dir}/${name}`, content);
    else await Deno.writeFile(`${dir}/${name}`, content);
  }
  await Deno.mkdir(`${dir}/empty_dir`);
  await Deno.writeTextFile(`${dir}/empty_dir/metrics.jsonl`, "not json\n");
  await Deno.mkdir(`${dir}/broken_plugin`);
  await Deno.writeTextFile(`${dir}/broken_plugin/p.ts`, "export const x = ;\n");
}

/** A new fixture directory (see the file comment); the caller removes it. */
export async function makeFixture(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "rft-fuzz-" });
  await writeModels(dir);
  await writeConfigs(dir);
  return dir;
}

/**
 * Runs each case as `./rft`, two at a time (each is a process), asserting exactly one
 * line on stderr, `rft <command>: ...` holding the case's text, no stack trace or colour codes,
 * nothing on stdout, exit code 2.
 */
export async function checkAll(all: FuzzCase[]): Promise<void> {
  const queue = [...all];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const [args, expected] = next;
      const { code, stdout, stderr } = await runRft(args);
      const what = `./rft ${args.join(" ")}\nstdout: ${stdout}\nstderr: ${stderr}`;
      const lines = stderr.trimEnd().split("\n");
      assertEquals(lines.length, 1, `one line: ${what}`);
      const known = ["run", "generate", "info", "plot", "export", "serve"].includes(args[0]);
      assertEquals(lines[0].startsWith(`rft${known ? ` ${args[0]}` : ""}: `), true, what);
      assertEquals(lines[0].includes(expected), true, `"${expected}" in: ${what}`);
      assertEquals(stderr.includes("\x1b["), false, `no colour codes: ${what}`);
      assertEquals(/^\s+at /m.test(stderr), false, `no stack: ${what}`);
      assertEquals(stdout, "", what);
      assertEquals(code, 2, what);
    }
  };
  await Promise.all([worker(), worker()]);
}
