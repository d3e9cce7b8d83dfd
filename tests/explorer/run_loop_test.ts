/**
 * The run loop without a GPU: `Explorer.run` and `Trainer.run` as two concurrent loops over one
 * experience buffer, coordinated by the Synchronizer, with a scripted workflow registry, a
 * rollout model that only carries its policy version, an injected weight copy and a train step
 * that records what it trains on. Asserts which policy version every trained batch was sampled
 * with, the rows each loop logs, and that a failing explorer ends the trainer's wait.
 */

import { SAMPLE_STRATEGY } from "../../src/algorithm/sample_strategy.ts";
import { type Experience, newEid } from "../../src/buffer/experience.ts";
import { ExperienceBuffer } from "../../src/buffer/experience_buffer.ts";
import { Taskset } from "../../src/buffer/taskset.ts";
import { TasksetScheduler } from "../../src/buffer/taskset_scheduler.ts";
import type { ExperienceOperator } from "../../src/buffer/operators/operator.ts";
import { Explorer } from "../../src/explorer/explorer.ts";
import { Synchronizer, type SyncStyle } from "../../src/sync/synchronizer.ts";
import { sampleStrategySource } from "../../src/trainer/sample_source.ts";
import type { TrainStep } from "../../src/trainer/train_step.ts";
import { Trainer } from "../../src/trainer/trainer.ts";
import { configure, Registry } from "../../src/util/registry.ts";
import type { WorkflowFactory } from "../../src/workflow/workflow.ts";
import { assertEquals, assertRejects } from "../_asserts.ts";
import { inTempDir } from "../_temp_dir.ts";
import { ScriptedModel } from "../workflow/_scripted_model.ts";

/** One experience per sample, stamped with the model's policy version at sampling time. */
const STAMP: WorkflowFactory = {
  description: "stamps the policy version",
  defaultArgs: {},
  create(task, { model }) {
    return {
      run: () =>
        Promise.resolve(Array.from({ length: task.rolloutArgs.n ?? 1 }, (_, runId): Experience => ({
          tokens: [1, 2, 3],
          promptLength: 1,
          actionMask: [0, 1, 1],
          logprobs: [0, -0.5, -0.5],
          reward: runId,
          info: {
            taskId: task.taskId,
            runId,
            policyVersion: model.policyVersion,
            eid: newEid(task.taskId, runId),
          },
        }))),
    };
  },
};

/** A train step that records the policy versions of each batch it is given. */
function recordingTrainStep(trained: number[][]): TrainStep {
  return {
    needsReference: false,
    // A policy loss with no mini-batch rewrite (ppo's registry entry has none).
    config: { policyLoss: { entry: {}, args: {} } },
    step: (batch: Experience[]) => {
      trained.push(batch.map((e) => e.info.policyVersion));
      return Promise.resolve({ loss: 0.5 });
    },
  } as unknown as TrainStep;
}

/** Runs both loops for `steps` steps (2 tasks x 2 samples each) under `style`. */
async function runLoops(
  dir: string,
  style: SyncStyle,
  offset: number,
  steps: number,
  workflow: WorkflowFactory = STAMP,
  operators: readonly ExperienceOperator[] = [],
) {
  await Deno.writeTextFile(
    `${dir}/tasks.jsonl`,
    Array.from({ length: 40 }, (_, i) => JSON.stringify({ prompt: `${i}` })).join("\n") + "\n",
  );
  const taskset = await Taskset.open({
    path: `${dir}/tasks.jsonl`,
    defaultWorkflowType: "stamp",
    rolloutArgs: { n: 2 },
  });
  const model = new ScriptedModel([]);
  await using buffer = await ExperienceBuffer.open(`${dir}/buffer`, { capacity: 64 });
  const controller = new AbortController();
  const sync = new Synchronizer({
    style,
    interval: 1,
    offset,
    copyWeights: (then) => Promise.resolve(then()),
    onSync: (version) => {
      model.policyVersion = version;
      buffer.setPolicyVersion(version);
    },
    initialVersion: 0,
    signal: controller.signal,
  });
  const explorerLines: string[] = [];
  const explorer = new Explorer({
    model,
    runnerNum: 2,
    maxTimeout: 10,
    maxRetryTimes: 0,
    workflows: new Registry<WorkflowFactory>("workflow", [["stamp", workflow]]),
    tasks: new TasksetScheduler([{ name: "train", taskset }], () => {}),
    batchSize: 2,
    buffer,
    operators,
    stateDir: dir,
    log: (line) => explorerLines.push(line),
    signal: controller.signal,
  });
  const trained: number[][] = [];
  const trainer = new Trainer({
    trainStep: recordingTrainStep(trained),
    ppoEpochs: 1,
    temperature: 1,
  });
  const exploreRows: number[] = [];
  const exploreMetrics: Record<string, number>[] = [];
  const trainRows: Record<string, number>[] = [];
  const buffers = { experience: buffer };
  const source = sampleStrategySource(
    configure(SAMPLE_STRATEGY, "default", {}),
    buffers,
    () => sync.explorerDone,
  );
  const abortOnFailure = <T>(loop: Promise<T>) =>
    loop.catch((err) => {
      controller.abort(err);
      throw err;
    });
  const [explored, trainedSteps] = await Promise.allSettled([
    abortOnFailure(explorer.run({
      totalSteps: steps,
      sync,
      report: (step, metrics) => {
        exploreRows.push(step);
        exploreMetrics.push(metrics);
        return Promise.resolve();
      },
    })),
    abortOnFailure(trainer.run(source, {
      batchSize: 4,
      startStep: 0,
      totalSteps: steps,
      sync,
      logRow: (_, row) => Promise.resolve(void trainRows.push(row)),
      checkpoint: { every: 0, save: () => Promise.resolve() },
      log: () => {},
      signal: controller.signal,
    })),
  ]);
  return {
    explored,
    trainedSteps,
    trained,
    exploreRows,
    exploreMetrics,
    explorerLines,
    trainRows,
  };
}

Deno.test("fixed, on-policy: train step t trains on experiences sampled with version t - 1", async () => {
  await inTempDir("rft-loop-", async (dir) => {
    const r = await runLoops(dir, "fixed", 0, 4);
    assertEquals([r.explored.status, r.trainedSteps.status], ["fulfilled", "fulfilled"]);
    assertEquals(r.trained, [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]]);
    assertEquals(r.exploreRows, [1, 2, 3, 4]);
    assertEquals(r.trainRows.map((row) => row["sync/trainer_version"]), [1, 2, 3, 4]);
    assertEquals(r.trainRows.map((row) => row["sample/count"]), [4, 4, 4, 4]);
    assertEquals(r.trainRows.map((row) => row["actor/loss"]), [0.5, 0.5, 0.5, 0.5]);
  });
});

Deno.test("fixed, offset 1: one step off, batches sampled with version max(0, t - 2)", async () => {
  await inTempDir("rft-loop-", async (dir) => {
    const r = await runLoops(dir, "fixed", 1, 4);
    assertEquals(r.trained.map((b) => b[0]), [0, 0, 1, 2]);
    assertEquals(r.trained.every((b) => b.length === 4 && new Set(b).size === 1), true);
  });
});

for (const style of ["explorer_driven", "trainer_driven"] as const) {
  Deno.test(`${style}: both loops finish; batches come from versions that existed, never newer`, async () => {
    await inTempDir("rft-loop-", async (dir) => {
      const r = await runLoops(dir, style, 0, 6);
      assertEquals([r.explored.status, r.trainedSteps.status], ["fulfilled", "fulfilled"]);
      assertEquals(r.exploreRows, [1, 2, 3, 4, 5, 6]);
      // Train step t sees weights of version t - 1 at most; versions never go back.
      const versions = r.trained.map((batch) => Math.max(...batch));
      versions.forEach((v, i) => assertEquals(v <= i, true, `step ${i + 1} trained on v${v}`));
      assertEquals(versions.every((v, i) => i === 0 || v >= versions[i - 1]), true);
      assertEquals(r.trainRows.map((row) => row["sync/trainer_version"]), [1, 2, 3, 4, 5, 6]);
    });
  });
}

Deno.test("a failing explorer ends the trainer's wait instead of leaving it hanging", async () => {
  await inTempDir("rft-loop-", async (dir) => {
    const broken: WorkflowFactory = {
      ...STAMP,
      create: () => ({ run: () => Promise.reject(new Error("scripted failure")) }),
    };
    const r = await runLoops(dir, "fixed", 0, 4, broken);
    // The trainer returned (it did not wait forever); it trained on nothing.
    assertEquals(r.explored.status, "rejected");
    assertEquals(r.trainRows.every((row) => !("actor/loss" in row)), true);
    await assertRejects(
      () => Promise.reject((r.explored as PromiseRejectedResult).reason),
      Error,
      "every task failed (last error: scripted failure)",
    );
    assertEquals(r.trained, []);
  });
});

Deno.test("a step whose groups are all filtered warns and the run goes on, the count in the metrics", async () => {
  await inTempDir("rft-loop-", async (dir) => {
    // Filters everything sampled with policy versions 1 and 2 (explore steps 2 and 3).
    const filter: ExperienceOperator = {
      name: "drop_some_versions",
      process: (exps) => ({
        experiences: exps.filter((e) => ![1, 2].includes(e.info.policyVersion)),
        metrics: {},
      }),
    };
    const r = await runLoops(dir, "fixed", 0, 5, STAMP, [filter]);
    assertEquals([r.explored.status, r.trainedSteps.status], ["fulfilled", "fulfilled"]);
    assertEquals(r.exploreRows, [1, 2, 3, 4, 5]);
    assertEquals(r.exploreMetrics.map((m) => m["pipeline/filtered_steps_total"]), [0, 1, 2, 2, 2]);
    assertEquals(r.explorerLines, [
      "explore step 2: every group was filtered by the experience pipeline; going on (1 step(s) filtered so far)",
      "explore step 3: every group was filtered by the experience pipeline; going on (2 step(s) filtered so far)",
    ]);
    // Train steps 2 and 3 found nothing and left the weights; the others trained.
    assertEquals(r.trained.map((b) => b[0]), [0, 3, 4]);
  });
});
