/** `rft run` in modes both and explore, in process: versions, sync, checkpoints, experiences. */

import { assertEquals, assertRejects } from "../_asserts.ts";
import { readExperienceDir } from "../../src/buffer/experience_io.ts";
import { loadConfig } from "../../src/config/load_config.ts";
import { runConfig } from "../../src/run/run.ts";
import {
  checkpointSteps,
  metricsRows,
  quiet,
  readJson,
  trainRows,
  withFixture,
} from "./_fixture.ts";

Deno.test("mode both: on-policy versions, trainer versions, checkpoints and persisted experiences", async () => {
  await withFixture(async (f) => {
    const file = await f.writeConfig({ trainer: { save_interval: 2 } }, "both.yaml");
    const summary = await runConfig(await loadConfig(file), quiet);
    const runDir = f.runDir("both");
    assertEquals(summary.runDir, runDir);
    assertEquals(summary.stages.map((s) => s.outcome.steps), [3]);

    const rows = await metricsRows(runDir);
    const train = trainRows(rows);
    assertEquals(train.map((r) => r.step), [1, 2, 3]);
    assertEquals(train.map((r) => r["explorer/policy_version"]), [0, 1, 2]);
    assertEquals(train.map((r) => r["sync/trainer_version"]), [1, 2, 3]);
    for (const r of train) {
      assertEquals(Number.isFinite(r["actor/loss"]), true, `actor/loss of step ${r.step}`);
      assertEquals(r["actor/batch_size"], 4, `batch of step ${r.step}`);
    }
    // save_interval 2 of 3 steps: step 2, and the final step 3.
    assertEquals(await checkpointSteps(runDir), [2, 3]);
    const state = await readJson(`${runDir}/checkpoints/step_3/trainer_state.json`);
    assertEquals(state.step, 3);

    const accepted = train.reduce((s, r) => s + (r["buffer/accepted"] ?? 0), 0);
    assertEquals(accepted, 12);
    const read = await readExperienceDir(`${runDir}/experiences`);
    assertEquals(read.warnings, []);
    assertEquals(read.experiences.length, accepted);
    assertEquals(new Set(read.experiences.map((e) => e.info.eid)).size, accepted);
    // Every persisted experience was trained on once.
    const retired = (state.buffer_retired as string[]).slice().sort();
    assertEquals(retired, read.experiences.map((e) => e.info.eid).sort());

    // Eval on startup (step 0) and at the end (version 3).
    const evalSteps = rows.filter((r) => "eval/held_out/accuracy" in r).map((r) => r.step);
    assertEquals(evalSteps, [0, 3]);
    const done = await readJson(`${runDir}/stage_done.json`);
    assertEquals(done.steps, 3);
    assertEquals(done.final_checkpoint, "checkpoints/step_3");
  });
});

Deno.test("mode both, sync_offset 1: explore step s samples version max(0, s - 2)", async () => {
  await withFixture(async (f) => {
    const file = await f.writeConfig({
      buffer: { total_steps: 4 },
      synchronizer: { sync_offset: 1 },
      explorer: { eval_on_startup: false },
    }, "offset1.yaml");
    await runConfig(await loadConfig(file), quiet);
    const train = trainRows(await metricsRows(f.runDir("offset1")));
    assertEquals(train.map((r) => r.step), [1, 2, 3, 4]);
    assertEquals(train.map((r) => r["explorer/policy_version"]), [0, 0, 1, 2]);
    assertEquals(train.map((r) => r["sync/trainer_version"]), [1, 2, 3, 4]);
  });
});

Deno.test("mode both, sync_interval 2: versions advance two train steps at a time", async () => {
  await withFixture(async (f) => {
    const file = await f.writeConfig({
      buffer: { total_steps: 4 },
      synchronizer: { sync_interval: 2 },
      explorer: { eval_on_startup: false },
    }, "interval2.yaml");
    await runConfig(await loadConfig(file), quiet);
    const train = trainRows(await metricsRows(f.runDir("interval2")));
    // interval * floor((s - 1) / interval) for s = 1..4.
    assertEquals(train.map((r) => r["explorer/policy_version"]), [0, 0, 2, 2]);
    assertEquals(train.map((r) => r["sync/trainer_version"]), [1, 2, 3, 4]);
  });
});

Deno.test("mode both resumed from a checkpoint older than the explorer: the newer experiences are refused, retired and explored again", async () => {
  await withFixture(async (f) => {
    const file = await f.writeConfig({ explorer: { eval_on_startup: false } }, "ahead.yaml");
    const config = await loadConfig(file);
    await runConfig(config, quiet);
    const runDir = f.runDir("ahead");
    // The state a kill leaves when it lands after explore step 3 (sampled with version 2) was
    // put and before checkpoint step_2 was complete: what the resume reads (checkpoints, the
    // explorer's cursor and the persisted experiences) is as it was then; the buffer's own
    // record and the rows of steps 2 and 3 are rewound and dropped by the resume.
    for (const step of [2, 3]) {
      await Deno.remove(`${runDir}/checkpoints/step_${step}`, { recursive: true });
    }
    await Deno.writeTextFile(`${runDir}/checkpoints/latest_checkpoint.txt`, "step_1\n");
    await Deno.remove(`${runDir}/stage_done.json`);
    const before = (await readExperienceDir(`${runDir}/experiences`)).experiences;
    const ahead = before.filter((e) => e.info.policyVersion > 1).map((e) => e.info.eid);
    assertEquals(ahead.length, 4);

    const summary = await runConfig(config, quiet);
    assertEquals(summary.stages.map((s) => s.outcome.steps), [3]);
    const train = trainRows(await metricsRows(runDir));
    assertEquals(train.map((r) => r.step), [1, 2, 3]);
    // Explore step 2 was done before the kill: its metrics went with the process.
    assertEquals(train.map((r) => r["explorer/policy_version"] ?? "-"), [0, "-", 2]);
    assertEquals(train.map((r) => r["actor/batch_size"]), [4, 4, 4]);
    assertEquals(train.map((r) => r["buffer/rejected_future"]), [0, 4, 4]);
    // Explore step 3 ran again with version 2: four more experiences, and the refused four
    // were retired without a train step taking them.
    const after = (await readExperienceDir(`${runDir}/experiences`)).experiences;
    assertEquals(after.map((e) => e.info.policyVersion).sort(), [
      0,
      0,
      0,
      0,
      1,
      1,
      1,
      1,
      2,
      2,
      2,
      2,
      2,
      2,
      2,
      2,
    ]);
    const retired = (await readJson(`${runDir}/checkpoints/step_3/trainer_state.json`))
      .buffer_retired as string[];
    assertEquals(retired.slice().sort(), after.map((e) => e.info.eid).sort());
    const trained = retired.filter((eid) => !ahead.includes(eid));
    assertEquals(trained.length, 12);
  });
});

Deno.test("mode both stopped between an explore step's put and its cursor: the resume explores that step again and trains each step on-policy", async () => {
  for (const step of [1, 3]) {
    await withFixture(async (f) => {
      const file = await f.writeConfig({
        buffer: { total_steps: 4 },
        explorer: { eval_on_startup: false },
      }, "orphan.yaml");
      const config = await loadConfig(file);
      const runDir = f.runDir("orphan");
      // A directory where the step's schedule file goes: the step fails after its experiences
      // are persisted and before its cursor is saved, as a kill there would leave it.
      const blocker = `${runDir}/task_schedule/step_${step}.json`;
      await Deno.mkdir(blocker, { recursive: true });
      await assertRejects(() => runConfig(config, quiet), Error, blocker);
      const before = Array.from({ length: step - 1 }, (_, i) => i + 1);
      assertEquals(await checkpointSteps(runDir).catch(() => []), before);
      const persisted = (await readExperienceDir(`${runDir}/experiences`)).experiences;
      const orphans = persisted.filter((e) => e.info.policyVersion === step - 1)
        .map((e) => e.info.eid);
      assertEquals(orphans.length, 4);
      await Deno.remove(blocker);

      const lines: string[] = [];
      await runConfig(config, { log: (line) => lines.push(line) });
      const resumed = lines.find((l) => l.includes("experiences restored"));
      const expected = `explore step ${step - 1}, train step ${step - 1}; 0 experiences ` +
        `restored, 4 of explore step ${step} discarded`;
      assertEquals(resumed?.endsWith(expected), true, resumed);
      const train = trainRows(await metricsRows(runDir));
      assertEquals(train.map((r) => r.step), [1, 2, 3, 4]);
      assertEquals(train.map((r) => r["explorer/policy_version"]), [0, 1, 2, 3]);
      assertEquals(train.map((r) => r["sample/staleness_mean"]), [0, 0, 0, 0]);
      assertEquals(train.map((r) => r["actor/batch_size"]), [4, 4, 4, 4]);
      // The orphans were retired unused; every other experience was trained on once.
      const after = (await readExperienceDir(`${runDir}/experiences`)).experiences;
      const retired = (await readJson(`${runDir}/checkpoints/step_4/trainer_state.json`))
        .buffer_retired as string[];
      assertEquals(retired.slice().sort(), after.map((e) => e.info.eid).sort());
      assertEquals(orphans.filter((eid) => !retired.includes(eid)), []);
      assertEquals(after.length, 20);
    });
  }
});
