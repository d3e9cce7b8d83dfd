/**
 * Every `rft` subcommand given the files a newcomer gets wrong, as subprocesses: missing files,
 * directories for files and files for directories, empty and non-UTF-8 files, a model's
 * config.json for a run config, configs for the wrong mode (bench without eval tasksets,
 * explore without a taskset, train without experiences or demonstrations, a default workflow
 * whose prompt the model's tokenizer cannot encode), datasets that are
 * empty, a directory, of the wrong keys or not UTF-8, model directories without weights or
 * tokenizer or with a broken config or truncated weights, a plugin that does not compile, an
 * output path that cannot be written and a port already in use. Each is exactly one line,
 * `rft <command>: ...` naming what is wrong, exit 2, before any GPU work where the input can be
 * checked first (`_fuzz_fixture.ts`).
 */

import { checkAll, type FuzzCase, makeFixture } from "./_fuzz_fixture.ts";
import { assertEquals } from "../_asserts.ts";
import { pathExists } from "../../src/util/path_exists.ts";

/** Mistakes in files, per subcommand; `port` is a port something already listens on. */
function cases(d: string, port: number): FuzzCase[] {
  const char = ["--model", `${d}/char`];
  const run = (file: string, ...args: string[]) => ["run", `${d}/${file}`, ...args];
  const gen = (model: string) => ["generate", "--model", `${d}/${model}`, "--prompt", "1"];
  return [
    // run: the config file itself.
    [run("missing.yaml"), "missing.yaml"],
    [run("empty_dir"), "empty_dir"],
    [run("garbage.yaml"), "garbage.yaml"],
    [run("empty.yaml"), "empty.yaml"],
    [run("list.yaml"), "list.yaml"],
    [run("not_utf8.yaml"), "not_utf8.yaml:2: a YAML config: expected UTF-8 text"],
    [run("unknown_key.yaml"), "total_stepz"],
    [run("char/config.json"), 'unknown key "model_type"'],
    [run("tasks.jsonl"), "tasks.jsonl"],
    // run: a config for the wrong mode.
    [run("bench_no_eval.yaml"), "eval_tasksets: expected a list of eval tasksets"],
    [run("explore_sft.yaml"), 'taskset: expected a taskset section (mode "explore"'],
    [run("train_no_experiences.yaml"), "experience_buffer.path: expected experiences to train"],
    [run("sft_no_dataset.yaml"), "sft_warmup_dataset: expected a dataset section"],
    [run("default_workflow.yaml"), 'prompt as workflow "math_workflow" builds it: Cannot encode'],
    // run: datasets and models it reads.
    [run("empty_taskset.yaml"), "no usable rows"],
    [run("wrong_keys.yaml"), 'has no "prompt" (prompt_key)'],
    [run("taskset_not_utf8.yaml"), "not UTF-8 on line 2"],
    [run("taskset_dir.yaml"), "empty_dir"],
    [run("model_is_file.yaml"), "a_file"],
    [run("model_no_tokenizer.yaml"), "no_tokenizer"],
    [run("ok.yaml", "--plugin-dir", `${d}/no_plugins`), "no_plugins"],
    [run("ok.yaml", "--plugin-dir", `${d}/a_file`), "a_file"],
    [run("ok.yaml", "--plugin-dir", `${d}/broken_plugin`), "Cannot load plugin"],
    // generate (and serve, export: the same model loader)
    [["generate", "--model", `${d}/nowhere`, "--prompt", "1"], "no such file or directory"],
    [gen("a_file"), "expected a directory"],
    [gen("empty_dir"), "found none of these"],
    [gen("no_weights"), "expected weights (model.safetensors"],
    [gen("no_tokenizer"), "expected a tokenizer (tokenizer.json or char_tokenizer.json)"],
    [gen("bad_config"), "config.json"],
    [gen("truncated"), "model.safetensors"],
    [gen("char/model.safetensors"), "expected a directory"],
    [[...gen("char"), "--adapter", `${d}/empty_dir`], "adapter_config.json"],
    // plot
    [["plot", `${d}/nowhere`], "the directory does not exist"],
    [["plot", `${d}/a_file`], "it is not a directory"],
    [["plot", `${d}/char`], "it has no metrics.jsonl"],
    [["plot", `${d}/empty_dir`], "has no readable rows"],
    [["plot", `${d}/empty_dir`, "--out", d], "expected a file to write, found a directory"],
    [["plot", `${d}/empty_dir`, "--out", `${d}/nowhere/p.html`], "found nothing"],
    // export
    [["export", "--onnx", `${d}/x.onnx`, "--model", `${d}/nowhere`], "no such file"],
    [["export", "--onnx", `${d}/a_file/x.onnx`, ...char], "a_file"],
    [["export", "--onnx", d, ...char], "expected a file to write, found a directory"],
    [["export", "--onnx", `${d}/nowhere/x.onnx`, ...char], "found nothing"],
    [["export", "--transformers-js", `${d}/a_file`, ...char], "found a file"],
    [["export", "--transformers-js", `${d}/t`, "--model", `${d}/no_tokenizer`], "a tokenizer"],
    // serve
    [["serve", "--model", `${d}/nowhere`], "no such file"],
    [["serve", "--model", `${d}/no_tokenizer`], "expected a tokenizer"],
    [["serve", ...char, "--port", String(port)], `cannot listen on 127.0.0.1:${port}`],
    [["serve", ...char, "--port", "70000"], "cannot listen"],
    [["serve", ...char, "--host", "host.invalid", "--port", "0"], "cannot listen"],
    [["serve", ...char, "--max-prompt-tokens", "64"], "positions"],
    [["serve", ...char, "--plugin-dir", `${d}/broken_plugin`], "Cannot load plugin"],
  ];
}

Deno.test("rft fuzz: missing, wrong, empty and non-UTF-8 files, wrong-mode configs and a busy port are one line, exit 2", async () => {
  const dir = await makeFixture();
  using busy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    await checkAll(cases(dir, busy.addr.port));
    // Nothing was written for a config refused before the run began.
    assertEquals(await pathExists(`${dir}/runs`), false, "no run directory");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
