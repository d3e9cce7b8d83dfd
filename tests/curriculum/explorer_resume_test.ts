/**
 * A difficulty_based run stopped after an explore step (as by kill -9: only what the explorer
 * wrote survives) and resumed from its state files draws the same tasks as an uninterrupted run.
 */

import { assertEquals } from "../_asserts.ts";
import { createOperators } from "../../src/buffer/operators/mod.ts";
import { Taskset } from "../../src/buffer/taskset.ts";
import { TasksetScheduler } from "../../src/buffer/taskset_scheduler.ts";
import { Explorer, EXPLORER_STATE_FILE } from "../../src/explorer/explorer.ts";
import { ScriptedModel, TOKENIZER } from "../workflow/_scripted_model.ts";
import { inTempDir } from "../_temp_dir.ts";

const ROWS = Array.from({ length: 12 }, (_, i) => ({ q: `q${i}`, a: "1", low: 0, high: i / 12 }));

/** Task `qi` is answered right by sample s when (i + s) % (i % 4 + 1) is 0. */
function reply(prompt: string, sample: number): string {
  const i = Number(prompt.match(/q(\d+)/)![1]);
  return (i + sample) % (i % 4 + 1) === 0 ? "1" : "0";
}

/** An explorer over ROWS with a difficulty_based selector, its state in `stateDir`. */
async function explorer(dataDir: string, stateDir: string) {
  const taskset = await Taskset.open({
    path: `${dataDir}/tasks.jsonl`,
    format: { promptKey: "q", responseKey: "a" },
    defaultWorkflowType: "simple_workflow",
    defaultRewardFnType: "exact_match",
    rolloutArgs: { n: 4 },
    workflowArgs: { use_chat_template: false },
    selector: "difficulty_based",
    featureKeys: ["low", "high"],
    selectorArgs: { m: 4, tau: 0.1, target_reward: 0.5 },
    seed: 5,
    totalEpochs: 10,
  });
  const model = new ScriptedModel(reply);
  const tasks = new TasksetScheduler([{ name: "q", taskset }], () => {});
  return {
    model,
    explorer: new Explorer({
      model,
      runnerNum: 1,
      maxTimeout: 60,
      maxRetryTimes: 0,
      tasks,
      batchSize: 3,
      operators: createOperators([]),
      stateDir,
      log: () => {},
    }),
  };
}

/** The questions the model is asked over `steps` explore steps. */
async function questions(side: Awaited<ReturnType<typeof explorer>>, steps: number) {
  const before = side.model.calls.length;
  for (let s = 0; s < steps; s++) await side.explorer.exploreStep();
  return side.model.calls.slice(before).map((c) =>
    TOKENIZER.decode(c.promptTokens, { skipSpecialTokens: true })
  );
}

Deno.test("a difficulty_based explorer resumed from its state files draws as an uninterrupted one", async () => {
  await inTempDir("rft-curriculum-resume-", async (dir) => {
    await Deno.writeTextFile(`${dir}/tasks.jsonl`, ROWS.map((r) => JSON.stringify(r)).join("\n"));
    await Deno.mkdir(`${dir}/straight`);
    await Deno.mkdir(`${dir}/stopped`);
    await Deno.mkdir(`${dir}/fresh`);
    const straight = await questions(await explorer(dir, `${dir}/straight`), 6);
    const before = await questions(await explorer(dir, `${dir}/stopped`), 3);
    const resumed = await explorer(dir, `${dir}/stopped`);
    const saved = JSON.parse(await Deno.readTextFile(`${dir}/stopped/${EXPLORER_STATE_FILE}`));
    await resumed.explorer.restore(saved);
    assertEquals(resumed.explorer.step, 3);
    const after = await questions(resumed, 3);
    assertEquals([...before, ...after], straight);
    // The selector learned: the draws are not the same as a fresh selector's.
    const fresh = await questions(await explorer(dir, `${dir}/fresh`), 3);
    assertEquals(fresh.join() !== after.join(), true);
  });
});
