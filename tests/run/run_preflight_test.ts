/**
 * Every stage is checked before any GPU work: a mistake in a late stage (its algorithm, its
 * taskset, its workflow) fails the run at once, exit 2, one line naming the stage and key, and
 * nothing runs (no stage directory is written).
 */

import { ConfigError } from "../../src/config/config_error.ts";
import { loadConfig } from "../../src/config/load_config.ts";
import { checkStages } from "../../src/run/run_preflight.ts";
import { runConfig } from "../../src/run/run.ts";
import { assertEquals, assertRejects } from "../_asserts.ts";
import { exists, quiet, withFixture } from "./_fixture.ts";

const LAUNCHER = new URL("../../rft", import.meta.url).pathname;
const ROOT = new URL("../..", import.meta.url).pathname;

/** Two stages: sft (train) then grpo (both) with `late` merged into the grpo stage. */
function twoStages(late: Record<string, unknown>) {
  return {
    stages: [
      { stage_name: "warm", mode: "train", algorithm: { algorithm_type: "sft" } },
      { stage_name: "rl", ...late },
    ],
  };
}

const CASES: { name: string; late: Record<string, unknown>; expected: string }[] = [
  {
    name: "an unknown policy loss",
    late: { algorithm: { algorithm_type: "grpo", policy_loss_fn: "ppoo" } },
    expected: 'stages[1].algorithm.policy_loss_fn: Unknown policy loss fn "ppoo"',
  },
  {
    name: "an unknown advantage fn arg",
    late: { algorithm: { algorithm_type: "grpo", advantage_fn_args: { epsilonn: 1 } } },
    expected:
      'stages[1].algorithm.advantage_fn_args: Cannot configure advantage fn "grpo": unknown key "epsilonn"',
  },
  {
    name: "a taskset that is not a dataset",
    late: { buffer: { explorer_input: { taskset: { path: "./model/config.json" } } } },
    expected: "stages[1].buffer.explorer_input.taskset: Cannot open taskset",
  },
  {
    name: "an unknown workflow",
    late: { buffer: { explorer_input: { taskset: { default_workflow_type: "math_workfow" } } } },
    expected:
      'stages[1].buffer.explorer_input.taskset.default_workflow_type: Unknown workflow "math_workfow"',
  },
  {
    name: "a model directory without weights",
    late: { model: { from_scratch: false } },
    expected: "stages[1].model.model_path: Cannot open checkpoint",
  },
];

for (const { name, late, expected } of CASES) {
  Deno.test(`a late stage with ${name} fails before the first stage runs`, async () => {
    await withFixture(async (f) => {
      const file = await f.writeConfig(twoStages(late), "late.yaml");
      const config = await loadConfig(file);
      await assertRejects(() => runConfig(config, quiet), ConfigError, expected);
      await assertRejects(() => runConfig(config, quiet), ConfigError, '(stage "rl")');
      assertEquals(await exists(f.runDir("late")), false);
    });
  });
}

Deno.test("./rft run on the example with --set algorithm.algorithm_type=grpoo: exit 2 in seconds, naming the stage and key", async () => {
  const started = performance.now();
  const out = await new Deno.Command(LAUNCHER, {
    args: [
      "run",
      "examples/addition/config.yaml",
      "--set",
      "algorithm.algorithm_type=grpoo",
      "--set",
      "checkpoint_root_dir=/nonexistent/never/written",
    ],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const seconds = (performance.now() - started) / 1000;
  const stderr = new TextDecoder().decode(out.stderr).trim();
  assertEquals(out.code, 2);
  assertEquals(stderr.split("\n").length, 1, stderr);
  assertEquals(
    stderr.startsWith(
      'rft run: --set algorithm.algorithm_type=grpoo: stages[0].algorithm.algorithm_type: expected a known value, found "grpoo"',
    ),
    true,
    stderr,
  );
  assertEquals(seconds < 5, true, `took ${seconds} s`);
});

Deno.test("preflight skips a taskset row the tokenizer cannot encode, naming its file line", async () => {
  await withFixture(async (f) => {
    // The fixture's char tokenizer knows "0123456789+=" only: line 2 cannot be encoded.
    const rows = ["1+2=", "one+2=", "3+4="].map((prompt) =>
      JSON.stringify({ prompt, answer: "3" })
    );
    await Deno.writeTextFile(`${f.dir}/data/mixed.jsonl`, rows.join("\n") + "\n");
    const file = await f.writeConfig({
      buffer: { explorer_input: { taskset: { path: "./data/mixed.jsonl" } } },
    }, "mixed.yaml");
    const lines: string[] = [];
    await checkStages(await loadConfig(file), (line) => lines.push(line));
    assertEquals(lines, [
      `skipped ${f.dir}/data/mixed.jsonl line 2: the tokenizer cannot encode its prompt: ` +
      'Cannot encode with the char tokenizer: character "o" (U+006F) at index 0 is not in its ' +
      'vocabulary, and it has no "<unk>"',
    ]);
  });
});
