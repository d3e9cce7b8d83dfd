import { assertEquals } from "../_asserts.ts";
import { Taskset } from "../../src/buffer/taskset.ts";
import { createOperators } from "../../src/buffer/operators/mod.ts";
import { configure } from "../../src/util/registry.ts";
import { ADVANTAGE_FN } from "../../src/algorithm/advantage/mod.ts";
import { TasksetScheduler } from "../../src/buffer/taskset_scheduler.ts";
import { Explorer } from "../../src/explorer/explorer.ts";
import { type DynamicSampling, resolveAlgorithm } from "../../src/algorithm/resolve_algorithm.ts";
import { loadConfig } from "../../src/config/load_config.ts";
import { ScriptedModel } from "../workflow/_scripted_model.ts";
import { metricsRows, quiet, withFixture } from "./_fixture.ts";
import { runConfig } from "../../src/run/run.ts";
import { REWARD_FUNCTIONS } from "../../src/workflow/rewards/mod.ts";
import { inTempDir } from "../_temp_dir.ts";

/**
 * An explorer over `tasks` questions (answer "1"), 2 tasks x 2 rollouts per batch, answering
 * with `replies` in order (one runner, so calls come in task order), GRPO advantages.
 */
async function explorerWith(
  dir: string,
  replies: string[],
  dynamicSampling: DynamicSampling | undefined,
) {
  const path = `${dir}/tasks.jsonl`;
  const rows = Array.from({ length: 8 }, (_, i) => JSON.stringify({ q: `q${i}`, a: "1" }));
  await Deno.writeTextFile(path, rows.join("\n") + "\n");
  const taskset = await Taskset.open({
    path,
    format: { promptKey: "q", responseKey: "a" },
    defaultWorkflowType: "simple_workflow",
    defaultRewardFnType: "exact_match",
    rolloutArgs: { n: 2 },
    workflowArgs: { use_chat_template: false },
  });
  const model = new ScriptedModel(replies);
  const explorer = new Explorer({
    model,
    runnerNum: 1,
    maxTimeout: 60,
    maxRetryTimes: 0,
    tasks: new TasksetScheduler([{ name: "train", taskset }], () => {}),
    batchSize: 2,
    operators: createOperators([]),
    advantageFn: configure(ADVANTAGE_FN, "grpo", {}),
    dynamicSampling,
    stateDir: dir,
    log: () => {},
  });
  return { explorer, model, taskset };
}

/** The task rows (q0, q1, ...) of the kept experiences, one entry per group. */
function keptTasks(kept: { info: { taskId: string } }[]): string[] {
  return [...new Set(kept.map((e) => e.info.taskId))];
}

Deno.test("dynamic sampling draws more batches until batch_size groups have unequal rewards", async () => {
  await inTempDir("rft-dynamic-sampling-", async (dir) => {
    // Batch 1: q0 all right (dropped), q1 mixed. Batch 2: q2 all wrong (dropped), q3 mixed.
    const replies = ["1", "1", "1", "2", "2", "2", "2", "1"];
    const { explorer, model } = await explorerWith(dir, replies, { maxNumGenBatches: 10 });
    const step = await explorer.exploreStep();
    assertEquals(model.calls.length, 4);
    assertEquals(step.metrics["explorer/gen_batches"], 2);
    assertEquals(step.metrics["explorer/tasks"], 4);
    assertEquals(step.metrics["explorer/kept_groups"], 2);
    assertEquals(step.metrics["pipeline/reward_std_filter/filtered_groups"], 2);
    assertEquals(step.kept.length, 4);
    assertEquals(step.kept.map((e) => e.reward), [1, 0, 0, 1]);
    assertEquals(step.kept.map((e) => Math.sign(e.advantages!.at(-1)!)), [1, -1, -1, 1]);
    assertEquals(explorer.step, 1);
  });
});

Deno.test("dynamic sampling keeps the first batch_size groups and stops at max_num_gen_batches", async () => {
  await inTempDir("rft-dynamic-sampling-", async (dir) => {
    // Batch 1: q0 dropped, q1 kept; batch 2: q2 and q3 kept: 3 groups, the first 2 stay.
    const replies = ["1", "1", "1", "2", "1", "2", "2", "1"];
    const { explorer } = await explorerWith(dir, replies, { maxNumGenBatches: 0 });
    const step = await explorer.exploreStep();
    assertEquals(step.metrics["explorer/gen_batches"], 2);
    assertEquals(step.kept.length, 4);
    assertEquals(keptTasks(step.kept).length, 2);
    assertEquals(step.metrics["explorer/kept_groups"], 2);
  });
  await inTempDir("rft-dynamic-sampling-", async (dir) => {
    // Every group equal: one batch only with max_num_gen_batches 1, nothing kept.
    const { explorer, model } = await explorerWith(dir, ["1", "1", "2", "2"], {
      maxNumGenBatches: 1,
    });
    const step = await explorer.exploreStep();
    assertEquals(model.calls.length, 2);
    assertEquals(step.metrics["explorer/gen_batches"], 1);
    assertEquals(step.kept.length, 0);
  });
});

Deno.test("without dynamic sampling an explore step draws one batch and keeps equal-reward groups", async () => {
  await inTempDir("rft-dynamic-sampling-", async (dir) => {
    const { explorer, model } = await explorerWith(dir, ["1", "1", "1", "2"], undefined);
    const step = await explorer.exploreStep();
    assertEquals(model.calls.length, 2);
    assertEquals(step.kept.length, 4);
    assertEquals(step.metrics["explorer/gen_batches"], undefined);
  });
});

Deno.test("dapo turns dynamic sampling on by default; the config can turn it off or bound it", async () => {
  await withFixture(async (fixture) => {
    const load = async (algorithm: Record<string, unknown>) => {
      const config = await loadConfig(await fixture.writeConfig({ algorithm }));
      return resolveAlgorithm(config.stages[0].algorithm).dynamicSampling;
    };
    assertEquals(await load({ algorithm_type: "dapo" }), { maxNumGenBatches: 10 });
    assertEquals(await load({ algorithm_type: "grpo" }), undefined);
    assertEquals(
      await load({
        algorithm_type: "grpo",
        dynamic_sampling: { enable: true, max_num_gen_batches: 3 },
      }),
      { maxNumGenBatches: 3 },
    );
    assertEquals(
      await load({ algorithm_type: "dapo", dynamic_sampling: { enable: false } }),
      undefined,
    );
  });
});

// A reward that differs between samples of one prompt about half the time.
REWARD_FUNCTIONS.register("even_length_ds_test", {
  description: "1 when the response has an even number of characters",
  defaultArgs: {},
  compute: ({ response }) => ({ reward: response.length % 2 === 0 ? 1 : 0, metrics: {} }),
});

Deno.test("rft run with dapo: explore steps refill up to max_num_gen_batches and train on what is kept", async () => {
  await withFixture(async (fixture) => {
    const file = await fixture.writeConfig({
      buffer: { explorer_input: { default_reward_fn_type: "even_length_ds_test" } },
      algorithm: {
        algorithm_type: "dapo",
        repeat_times: 2,
        dynamic_sampling: { max_num_gen_batches: 2 },
      },
      explorer: { eval_interval: 0, eval_on_startup: false },
    }, "dapo.yaml");
    await runConfig(await loadConfig(file), quiet);
    const explored = (await metricsRows(fixture.runDir("dapo")))
      .filter((r) => "explorer/gen_batches" in r);
    assertEquals(explored.length, 3);
    for (const r of explored) {
      const batches = r["explorer/gen_batches"] as number;
      const kept = r["explorer/kept_groups"] as number;
      assertEquals(batches >= 1 && batches <= 2, true, JSON.stringify(r));
      assertEquals(r["explorer/tasks"], 2 * batches);
      // A second batch is drawn only when the first left fewer than batch_size groups.
      assertEquals(kept === 2 || batches === 2, true, JSON.stringify(r));
      assertEquals(r["pipeline/kept"], 2 * kept);
      // The trainer trains on a step's kept groups, and only on them.
      assertEquals("actor/loss" in r, kept > 0, JSON.stringify(r));
    }
    assertEquals(explored.some((r) => (r["explorer/kept_groups"] as number) > 0), true);
  });
});
