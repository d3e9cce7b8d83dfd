/**
 * The TasksetScheduler: batches split among tasksets by weight, task ids per taskset, feedback to
 * the selectors, Marin-style lessons (a prerequisite lets a taskset in, a rolling pass rate
 * graduates one out), its metrics, and a saved state that continues exactly.
 */

import { assertEquals, assertThrows } from "../_asserts.ts";
import type { Experience } from "../../src/buffer/experience.ts";
import { Taskset } from "../../src/buffer/taskset.ts";
import { type ScheduledTaskset, TasksetScheduler } from "../../src/buffer/taskset_scheduler.ts";
import type { Task } from "../../src/buffer/task.ts";
import { inTempDir } from "../_temp_dir.ts";

/** Opens a taskset of `size` rows `{q, a, level}` at `dir/name.jsonl`. */
async function taskset(dir: string, name: string, size: number, more = {}): Promise<Taskset> {
  const rows = Array.from({ length: size }, (_, i) => ({
    q: `${name}${i}`,
    a: "1",
    level: i % 3,
    low: 0,
    high: 1 - i / size,
  }));
  await Deno.writeTextFile(`${dir}/${name}.jsonl`, rows.map((r) => JSON.stringify(r)).join("\n"));
  return await Taskset.open({
    path: `${dir}/${name}.jsonl`,
    format: { promptKey: "q", responseKey: "a" },
    defaultWorkflowType: "simple_workflow",
    totalEpochs: 50,
    ...more,
  });
}

/** One experience per task with reward `reward(task)` (only the task id and reward matter). */
function rollouts(tasks: readonly Task[], reward: (task: Task) => number): Experience[] {
  return tasks.map((t) => ({ info: { taskId: t.taskId }, reward: reward(t) }) as Experience);
}

Deno.test("scheduler: one taskset keeps its task ids; several are mixed by weight", async () => {
  await inTempDir("rft-scheduler-", async (dir) => {
    const single = new TasksetScheduler(
      [{ name: "a", taskset: await taskset(dir, "a", 5) }],
      () => {},
    );
    assertEquals(single.nextBatch(3)!.map((t) => t.taskId), ["0.0", "0.1", "0.2"]);
    const mixed = new TasksetScheduler([
      { name: "a", taskset: await taskset(dir, "a", 5), weight: 3 },
      { name: "b", taskset: await taskset(dir, "b", 5), weight: 1 },
    ], () => {});
    const ids = [mixed.nextBatch(4)!, mixed.nextBatch(4)!].map((b) => b.map((t) => t.taskId));
    assertEquals(ids, [["a/0.0", "a/0.1", "a/0.2", "b/0.0"], ["a/0.3", "a/0.4", "a/1.0", "b/0.1"]]);
    // Without weights the sizes (Trinity's proportional mix): 8 of a for 2 of b.
    const bySize = new TasksetScheduler([
      { name: "a", taskset: await taskset(dir, "a", 8) },
      { name: "b", taskset: await taskset(dir, "b", 2) },
    ], () => {});
    const batch = bySize.nextBatch(10)!;
    assertEquals(batch.filter((t) => t.taskId.startsWith("b/")).length, 2);
  });
});

Deno.test("scheduler: feedback reaches the selector and the metrics", async () => {
  await inTempDir("rft-scheduler-", async (dir) => {
    const scheduler = new TasksetScheduler([{
      name: "a",
      taskset: await taskset(dir, "a", 6, {
        selector: "difficulty_based",
        featureKeys: ["low", "high"],
        selectorArgs: { tau: 0, target_reward: 0.5, m: 4 },
      }),
      featureKeys: ["level"],
    }], () => {});
    const first = scheduler.nextBatch(2)!;
    assertEquals(first.map((t) => t.index), [0, 1]); // all Beta(1, 1): ties by row
    const metrics = scheduler.feedback(rollouts(first, (t) => t.index === 0 ? 1 : 0));
    assertEquals(metrics["tasks/a/pass_rate"], 0.5);
    assertEquals(metrics["tasks/a/drawn"], 2);
    assertEquals(metrics["tasks/a/selected_level_mean"], 0.5);
    assertEquals(metrics["tasks/a/selected_pass_estimate_mean"], 0.5);
    // Row 0 passed, row 1 failed: both leave 0.5, and the next batch avoids them.
    const next = scheduler.nextBatch(2)!.map((t) => t.index);
    assertEquals(next.includes(0) || next.includes(1), false);
  });
});

Deno.test("scheduler: a lesson enters after its prerequisite and graduates at its pass rate", async () => {
  await inTempDir("rft-scheduler-", async (dir) => {
    const lines: string[] = [];
    const entries: ScheduledTaskset[] = [
      {
        name: "easy",
        taskset: await taskset(dir, "easy", 4),
        lesson: { window: 2, graduatePassRate: 0.9 },
      },
      {
        name: "hard",
        taskset: await taskset(dir, "hard", 4),
        lesson: { window: 2, requires: "easy", unlockPassRate: 0.5 },
      },
    ];
    const scheduler = new TasksetScheduler(entries, (line) => lines.push(line));
    const step = (passes: (t: Task) => boolean) => {
      const tasks = scheduler.nextBatch(4)!;
      const metrics = scheduler.feedback(rollouts(tasks, (t) => passes(t) ? 1 : 0));
      return { names: tasks.map((t) => t.taskId.split("/")[0]), metrics };
    };
    // Easy alone until its rolling pass rate over 2 steps reaches 0.5.
    assertEquals(step(() => false).names, ["easy", "easy", "easy", "easy"]);
    let s = step(() => true); // rolling (0 + 1) / 2 = 0.5: hard enters
    assertEquals(s.names, ["easy", "easy", "easy", "easy"]);
    assertEquals([s.metrics["tasks/hard/in_mix"], s.metrics["tasks/graduated"]], [1, 0]);
    s = step(() => true); // easy: rolling (1 + 1) / 2 = 1 >= 0.9: graduates
    assertEquals(s.names.sort(), ["easy", "easy", "hard", "hard"]);
    assertEquals([s.metrics["tasks/easy/in_mix"], s.metrics["tasks/graduated"]], [0, 1]);
    assertEquals(step(() => false).names, ["hard", "hard", "hard", "hard"]);
    assertEquals(lines, [
      "taskset hard entered the mix (easy rolling pass rate 0.5)",
      "taskset easy graduated (rolling pass rate 1)",
    ]);
  });
});

Deno.test("scheduler: a saved state continues with the same draws as an uninterrupted run", async () => {
  await inTempDir("rft-scheduler-", async (dir) => {
    const make = async () =>
      new TasksetScheduler([
        {
          name: "a",
          taskset: await taskset(dir, "a", 9, {
            selector: "difficulty_based",
            featureKeys: ["low", "high"],
            selectorArgs: { tau: 0.2, target_reward: 0.5 },
            seed: 3,
          }),
          weight: 2,
          lesson: { window: 2, graduatePassRate: 0.95 },
        },
        { name: "b", taskset: await taskset(dir, "b", 5, { selector: "shuffle" }), weight: 1 },
      ], () => {});
    const run = (scheduler: TasksetScheduler, steps: number) =>
      Array.from({ length: steps }, () => {
        const tasks = scheduler.nextBatch(5)!;
        scheduler.feedback(rollouts(tasks, (t) => (t.index % 4) / 3));
        return tasks.map((t) => t.taskId + "@" + t.index);
      });
    const straight = run(await make(), 8);
    const first = await make();
    const before = run(first, 4);
    const resumed = await make();
    resumed.restore(JSON.parse(JSON.stringify(first.state())));
    assertEquals([...before, ...run(resumed, 4)], straight);
  });
});

Deno.test("scheduler: a prerequisite must name another taskset", () => {
  assertThrows(
    () =>
      new TasksetScheduler([{
        name: "a",
        taskset: {} as Taskset,
        lesson: { window: 1, requires: "a" },
      }], () => {}),
    Error,
    `Cannot schedule taskset "a": lesson.requires is "a"; expected the name of another taskset (a)`,
  );
});
