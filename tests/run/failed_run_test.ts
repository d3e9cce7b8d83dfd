/**
 * Runs that fail: a workflow that starts failing mid-run ends the run with an error naming why
 * (not a success), and everything written survives it (the buffer's parquet parts readable, the
 * buffer reopened with nothing lost; Deno's sanitizers check no timer or file is left open).
 * A run in which every task failed is not a success either.
 */

import { BUFFER_STATE_FILE, ExperienceBuffer } from "../../src/buffer/experience_buffer.ts";
import { readExperienceDir } from "../../src/buffer/experience_io.ts";
import { loadConfig } from "../../src/config/load_config.ts";
import { MAX_EMPTY_STEPS } from "../../src/explorer/explorer.ts";
import { runConfig } from "../../src/run/run.ts";
import { experienceFromRollout, WORKFLOWS } from "../../src/workflow/mod.ts";
import { assertEquals, assertRejects } from "../_asserts.ts";
import { withFixture } from "./_fixture.ts";

/** Registers workflow `name`: the first `good` tasks sample and score 1; later ones throw. */
function registerFailingAfter(name: string, good: number): void {
  let started = 0;
  WORKFLOWS.register(name, {
    description: "fails after its first tasks",
    defaultArgs: {},
    create(task, context) {
      return {
        async run() {
          if (started++ >= good) throw new Error(`scripted failure of task ${task.taskId}`);
          const rollouts = await context.model.generate(String(task.rawTask.prompt), {
            ...task.rolloutArgs,
          });
          return rollouts.map((rollout, runId) => experienceFromRollout(task, runId, rollout, 1));
        },
      };
    },
  });
}

Deno.test("a workflow failing from step 2 on fails the run; the buffer's parts stay readable", async () => {
  registerFailingAfter("fails_after_step_1", 2);
  await withFixture(async (f) => {
    const file = await f.writeConfig({
      buffer: {
        total_steps: 8,
        // The scripted workflow reads no workflow_args, so the taskset gives none.
        explorer_input: {
          default_workflow_type: "fails_after_step_1",
          taskset: { workflow_args: null },
          eval_tasksets: [],
        },
      },
      explorer: { max_retry_times: 0, eval_on_startup: false },
    }, "fails.yaml");
    await assertRejects(
      async () => runConfig(await loadConfig(file), { log: () => {} }),
      Error,
      `kept no experience in ${MAX_EMPTY_STEPS} step(s) in a row up to step ${
        1 + MAX_EMPTY_STEPS
      }: every task failed (last error: scripted failure of task`,
    );
    const dir = `${f.runDir("fails")}/experiences`;
    const read = await readExperienceDir(dir);
    assertEquals(read.warnings, []);
    // Step 1: 2 tasks x 2 rollouts, each persisted before it was acknowledged.
    assertEquals(read.experiences.length, 4);
    // Step 1 was trained on: its consumption record lists exactly those experiences.
    const state = JSON.parse(await Deno.readTextFile(`${dir}/${BUFFER_STATE_FILE}`));
    const eids = read.experiences.map((e) => e.info.eid).sort();
    assertEquals([...state.retired].sort(), eids);
    const reopened = await ExperienceBuffer.open(dir, { capacity: 100 });
    assertEquals(reopened.restoreWarnings, []);
    await reopened.close();
  });
});

Deno.test("a run in which every task failed is not a success", async () => {
  registerFailingAfter("always_fails", 0);
  await withFixture(async (f) => {
    const file = await f.writeConfig({
      buffer: {
        total_steps: 1,
        explorer_input: {
          default_workflow_type: "always_fails",
          taskset: { workflow_args: null },
          eval_tasksets: [],
        },
      },
      explorer: { max_retry_times: 1, eval_on_startup: false },
    }, "all_failed.yaml");
    await assertRejects(
      async () => runConfig(await loadConfig(file), { log: () => {} }),
      Error,
      "kept no experience in 1 step(s) in a row up to step 1: every task failed",
    );
  });
});
