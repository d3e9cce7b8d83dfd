import type { Experience } from "../../src/buffer/experience.ts";
import { runTasks, type RunTasksOptions } from "../../src/explorer/workflow_runner.ts";
import { Registry } from "../../src/util/registry.ts";
import type { WorkflowFactory } from "../../src/workflow/workflow.ts";
import { assertEquals, assertRejects } from "../_asserts.ts";
import { makeTask, ScriptedModel } from "../workflow/_scripted_model.ts";

/** One experience of `taskId` with reward `reward`. */
function experience(taskId: string, reward: number): Experience {
  return {
    tokens: [1, 2],
    promptLength: 1,
    actionMask: [0, 1],
    logprobs: [0, -0.5],
    reward,
    info: { taskId, runId: 0, policyVersion: 0, eid: `${taskId}-e` },
  };
}

/** A workflow factory whose run is `run(taskId, attempt)`; records every attempt. */
function scriptedWorkflow(
  run: (taskId: string, attempt: number) => Promise<Experience[]>,
  attempts: Map<string, number>,
): WorkflowFactory {
  return {
    description: "scripted",
    defaultArgs: {},
    create(task) {
      return {
        run() {
          const attempt = (attempts.get(task.taskId) ?? 0) + 1;
          attempts.set(task.taskId, attempt);
          return run(task.taskId, attempt);
        },
      };
    },
  };
}

const never = new Promise<Experience[]>(() => {});

/** Options with `workflows` registered, 2 runners, 2 retries, a 0.05 s timeout. */
function options(
  workflows: Record<string, WorkflowFactory>,
  extra: Partial<RunTasksOptions> = {},
): RunTasksOptions {
  return {
    model: new ScriptedModel([]),
    runnerNum: 2,
    maxTimeout: 0.05,
    maxRetryTimes: 2,
    workflows: new Registry<WorkflowFactory>("workflow", Object.entries(workflows)),
    ...extra,
  };
}

Deno.test("runTasks: a flaky workflow is retried, each cause logged; experiences come back in task order", async () => {
  const attempts = new Map<string, number>();
  const flaky = scriptedWorkflow(
    (id, attempt) =>
      attempt < 3 ? Promise.reject(new Error(`flake ${attempt}`)) : Promise.resolve([
        experience(id, attempt),
      ]),
    attempts,
  );
  const ok = scriptedWorkflow((id) => Promise.resolve([experience(id, 1)]), attempts);
  const tasks = [
    makeTask({}, { taskId: "a", workflow: "flaky" }),
    makeTask({}, { taskId: "b", workflow: "ok" }),
  ];
  const lines: string[] = [];
  const result = await runTasks(tasks, options({ flaky, ok }, { log: (l) => lines.push(l) }));
  assertEquals(result.experiences.map((e) => [e.info.taskId, e.reward]), [["a", 3], ["b", 1]]);
  assertEquals(result.failures, []);
  assertEquals(result.retries, 2);
  assertEquals(lines, [
    "task a (workflow flaky) attempt 1 of 3 failed, retrying: flake 1",
    "task a (workflow flaky) attempt 2 of 3 failed, retrying: flake 2",
  ]);
  assertEquals(Object.fromEntries(attempts), { a: 3, b: 1 });
});

Deno.test("runTasks: a task failing every attempt is recorded with its last error; the others go on", async () => {
  const attempts = new Map<string, number>();
  const broken = scriptedWorkflow(
    (_, attempt) => Promise.reject(new Error(`bad row, attempt ${attempt}`)),
    attempts,
  );
  const ok = scriptedWorkflow((id) => Promise.resolve([experience(id, 1)]), attempts);
  const tasks = [
    makeTask({}, { taskId: "x", workflow: "broken" }),
    makeTask({}, { taskId: "y", workflow: "ok" }),
  ];
  const result = await runTasks(tasks, options({ broken, ok }, { maxRetryTimes: 1 }));
  assertEquals(result.failures, [
    { taskId: "x", workflow: "broken", error: "bad row, attempt 2", attempts: 2 },
  ]);
  assertEquals(result.retries, 1);
  assertEquals(result.experiences.map((e) => e.info.taskId), ["y"]);
});

Deno.test("runTasks: an attempt past max_timeout fails naming the task and is retried", async () => {
  const attempts = new Map<string, number>();
  const slowOnce = scriptedWorkflow(
    (id, attempt) => attempt === 1 ? never : Promise.resolve([experience(id, 1)]),
    attempts,
  );
  const hangs = scriptedWorkflow(() => never, attempts);
  const tasks = [
    makeTask({}, { taskId: "s", workflow: "slow_once" }),
    makeTask({}, { taskId: "h", workflow: "hangs" }),
  ];
  const result = await runTasks(
    tasks,
    options({ slow_once: slowOnce, hangs }, { maxRetryTimes: 1 }),
  );
  assertEquals(result.experiences.map((e) => e.info.taskId), ["s"]);
  assertEquals(result.failures, [
    { taskId: "h", workflow: "hangs", error: 'task "h" timed out after 0.05 s', attempts: 2 },
  ]);
  assertEquals(result.retries, 2);
});

Deno.test("runTasks: an abort rejects at once with its reason and starts no further task", async () => {
  const attempts = new Map<string, number>();
  const hangs = scriptedWorkflow(() => never, attempts);
  const controller = new AbortController();
  const tasks = ["1", "2", "3", "4"].map((id) => makeTask({}, { taskId: id, workflow: "hangs" }));
  const run = runTasks(
    tasks,
    options({ hangs }, { maxTimeout: 60, signal: controller.signal }),
  );
  await new Promise((resolve) => setTimeout(resolve, 10));
  controller.abort(new Error("stopped by test"));
  await assertRejects(() => run, Error, "stopped by test");
  // Two runners: only the first two tasks were started, each once.
  assertEquals(Object.fromEntries(attempts), { "1": 1, "2": 1 });
});

Deno.test("runTasks: runner_num bounds the attempts running at once; a reset workflow is reused", async () => {
  let running = 0, peak = 0, created = 0;
  const resets: string[] = [];
  const counted: WorkflowFactory = {
    description: "counts concurrency",
    defaultArgs: {},
    create(task) {
      created++;
      let id = task.taskId;
      return {
        async run() {
          running++;
          peak = Math.max(peak, running);
          await new Promise((resolve) => setTimeout(resolve, 5));
          running--;
          return [experience(id, 0)];
        },
        reset(next) {
          resets.push(next.taskId);
          id = next.taskId;
        },
      };
    },
  };
  const tasks = ["1", "2", "3", "4", "5"].map((id) =>
    makeTask({}, { taskId: id, workflow: "counted" })
  );
  const result = await runTasks(tasks, options({ counted }, { runnerNum: 2, maxTimeout: 10 }));
  assertEquals(result.experiences.map((e) => e.info.taskId), ["1", "2", "3", "4", "5"]);
  assertEquals([peak, created, resets.length], [2, 2, 3]);
});
