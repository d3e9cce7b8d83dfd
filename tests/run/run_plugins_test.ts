/**
 * Plugins: files importing the public API (`mod.ts`, by absolute file URL) register a workflow
 * and a reward fn that a run then uses; import failures become PluginErrors naming the file.
 * The registries are process-global, so every plugin here registers names unique to its test.
 */

import { assertEquals, assertRejects } from "../_asserts.ts";
import { loadConfig } from "../../src/config/load_config.ts";
import { loadPlugins, PluginError } from "../../src/run/run_plugins.ts";
import { runConfig } from "../../src/run/run.ts";
import { REWARD_FUNCTIONS, WORKFLOWS } from "../../src/workflow/mod.ts";
import { makeFixture, metricsRows, trainRows } from "./_fixture.ts";

const MOD = new URL("../../mod.ts", import.meta.url).href;

/** A plugin registering workflow `wf` (one metric `plugin_runs: 1` per sample) and reward `rf`. */
function pluginSource(wf: string, rf: string): string {
  return `import {
  computeReward, experienceFromRollout, resolveRewardFn, REWARD_FUNCTIONS, WORKFLOWS,
} from "${MOD}";

REWARD_FUNCTIONS.register("${rf}", {
  description: "1 for every response",
  defaultArgs: {},
  compute: () => ({ reward: 1, metrics: { accuracy: 1 } }),
});

WORKFLOWS.register("${wf}", {
  description: "raw prompt, n samples, one reward each",
  defaultArgs: {},
  create(task, context) {
    const rewardFn = resolveRewardFn(task, context);
    return {
      async run() {
        const prompt = String(task.rawTask[task.formatArgs.promptKey]);
        const rollouts = await context.model.generate(prompt, { ...task.rolloutArgs });
        return await Promise.all(rollouts.map(async (rollout, runId) => {
          const { reward, metrics } = await computeReward(rewardFn, task, rollout.text);
          return experienceFromRollout(task, runId, rollout, reward, {
            metrics: { ...metrics, plugin_runs: 1 },
          });
        }));
      },
    };
  },
});
`;
}

Deno.test("a plugin's workflow and reward fn are registered, reported and used by a run", async () => {
  const f = await makeFixture();
  try {
    const pluginDir = `${f.dir}/plugins`;
    await Deno.mkdir(pluginDir);
    await Deno.writeTextFile(`${pluginDir}/b_plugin.ts`, pluginSource("wf_run_a", "rf_run_a"));
    await Deno.writeTextFile(`${pluginDir}/a_empty.ts`, "export const nothing = 1;\n");
    await Deno.writeTextFile(`${pluginDir}/types.d.ts`, "this is not imported\n");
    await Deno.writeTextFile(`${pluginDir}/notes.txt`, "neither is this\n");
    assertEquals(WORKFLOWS.has("wf_run_a"), false);
    const loaded = await loadPlugins([
      { path: `${f.dir}/no_such_dir`, optional: true },
      { path: pluginDir, optional: false },
    ]);
    assertEquals(loaded, [
      { file: `${pluginDir}/a_empty.ts`, registered: [] },
      {
        file: `${pluginDir}/b_plugin.ts`,
        registered: ['workflow "wf_run_a"', 'reward fn "rf_run_a"'],
      },
    ]);
    assertEquals(REWARD_FUNCTIONS.has("rf_run_a"), true);

    // The plugin's workflow reads no workflow_args, so the tasksets give none.
    const format = { prompt_key: "prompt", response_key: "answer" };
    const file = await f.writeConfig({
      buffer: {
        total_steps: 2,
        explorer_input: {
          default_workflow_type: "wf_run_a",
          default_reward_fn_type: "rf_run_a",
          taskset: { workflow_args: null },
          eval_tasksets: [{ name: "held_out", path: "./data/eval.jsonl", format }],
        },
      },
    }, "plug.yaml");
    const summary = await runConfig(await loadConfig(file), { log: () => {} });
    assertEquals(summary.stages[0].outcome.steps, 2);
    const rows = await metricsRows(f.runDir("plug"));
    const train = trainRows(rows);
    assertEquals(train.map((r) => r["rollout/reward_mean"]), [1, 1]);
    assertEquals(train.map((r) => r["rollout/plugin_runs"]), [1, 1]);
    assertEquals(train.map((r) => r["rollout/count"]), [4, 4]);
    // The eval taskset uses them too.
    const evals = rows.filter((r) => "eval/held_out/reward_mean" in r);
    assertEquals(evals.map((r) => [r.step, r["eval/held_out/reward_mean"]]), [[0, 1], [2, 1]]);
  } finally {
    await f.remove();
  }
});

Deno.test("a plugin that cannot be imported is a PluginError naming the file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rft-plugins-" });
  try {
    for (
      const [name, source, cause] of [
        ["syntax", "export const x = ;\n", "SyntaxError"],
        ["throws", 'throw new Error("plugin refuses to load");\n', "plugin refuses to load"],
        [
          "taken",
          pluginSource("simple_workflow", "rf_taken_b"),
          'Cannot register workflow "simple_workflow": the name is taken',
        ],
      ]
    ) {
      await Deno.mkdir(`${dir}/${name}`);
      const file = `${dir}/${name}/p.ts`;
      await Deno.writeTextFile(file, source);
      await assertRejects(
        () => loadPlugins([{ path: `${dir}/${name}`, optional: true }]),
        PluginError,
        `Cannot load plugin ${file}: ${cause}`,
      );
    }
    await assertRejects(
      () => loadPlugins([{ path: `${dir}/missing`, optional: false }]),
      PluginError,
      `Cannot load plugin ${dir}/missing: cannot read the plugin directory`,
    );
    assertEquals(await loadPlugins([{ path: `${dir}/missing`, optional: true }]), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
