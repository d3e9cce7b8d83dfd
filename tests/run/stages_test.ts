/** `rft run` in process: mode explore then train, SFT, two stages, and bench. */

import { readMetrics } from "../../src/monitor/metrics_log.ts";
import { assertEquals } from "../_asserts.ts";
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

Deno.test("mode explore writes a buffer that a mode train run consumes whole", async () => {
  await withFixture(async (f) => {
    const explore = await f.writeConfig({ mode: "explore", buffer: { total_steps: 2 } }, "ex.yaml");
    const explored = await runConfig(await loadConfig(explore), quiet);
    assertEquals(explored.stages[0].outcome.steps, 2);
    const exDir = f.runDir("ex");
    const exRows = await metricsRows(exDir);
    const exploreRows = exRows.filter((r) => "rollout/reward_mean" in r);
    assertEquals(exploreRows.map((r) => r.step), [1, 2]);
    assertEquals(exploreRows.map((r) => r["explorer/policy_version"]), [0, 0]);
    assertEquals(trainRows(exRows), []);
    const { experiences } = await readExperienceDir(`${exDir}/experiences`);
    assertEquals(experiences.length, 8);
    assertEquals(exploreRows.reduce((s, r) => s + (r["buffer/accepted"] ?? 0), 0), 8);
    // A copy of the buffer as written (its parts, no consumption record yet).
    await Deno.mkdir(`${f.dir}/copy`);
    for await (const e of Deno.readDir(`${exDir}/experiences`)) {
      if (e.name.endsWith(".parquet")) {
        await Deno.copyFile(`${exDir}/experiences/${e.name}`, `${f.dir}/copy/${e.name}`);
      }
    }

    const train = await f.writeConfig({
      mode: "train",
      buffer: {
        total_steps: null,
        train_batch_size: 3,
        trainer_input: { experience_buffer: { path: `${exDir}/experiences` } },
      },
    }, "tr.yaml");
    const trained = await runConfig(await loadConfig(train), quiet);
    // 8 experiences in batches of 3: 3 + 3 + 2, then the buffer is empty.
    assertEquals(trained.stages[0].outcome.steps, 3);
    const rows = trainRows(await metricsRows(f.runDir("tr")));
    assertEquals(rows.map((r) => r.step), [1, 2, 3]);
    assertEquals(rows.map((r) => r["actor/batch_size"]), [3, 3, 2]);
    for (const r of rows) assertEquals(Number.isFinite(r["actor/loss"]), true);
    assertEquals(await checkpointSteps(f.runDir("tr")), [1, 2, 3]);

    // Without train_batch_size a train step takes batch_size * repeat_times = 2 x 2 experiences.
    const byDefault = await f.writeConfig({
      mode: "train",
      buffer: {
        total_steps: null,
        trainer_input: { experience_buffer: { path: `${f.dir}/copy` } },
      },
    }, "tr_default.yaml");
    await runConfig(await loadConfig(byDefault), quiet);
    const defaultRows = trainRows(await metricsRows(f.runDir("tr_default")));
    assertEquals(defaultRows.map((r) => r["actor/batch_size"]), [4, 4]);
  });
});

Deno.test("mode train with algorithm sft: the loss falls over 6 steps", async () => {
  await withFixture(async (f) => {
    const file = await f.writeConfig({
      mode: "train",
      algorithm: { algorithm_type: "sft" },
      buffer: { total_steps: 6, train_batch_size: 8 },
      trainer: { save_interval: 0 },
    }, "sft.yaml");
    const summary = await runConfig(await loadConfig(file), quiet);
    assertEquals(summary.stages[0].outcome.steps, 6);
    const rows = trainRows(await metricsRows(f.runDir("sft")));
    assertEquals(rows.map((r) => r.step), [1, 2, 3, 4, 5, 6]);
    const losses = rows.map((r) => r["actor/loss"] as number);
    for (const l of losses) assertEquals(Number.isFinite(l) && l > 0, true, String(losses));
    assertEquals(losses[0] > losses[5], true, `losses ${losses}`);
    // save_interval 0: only the final checkpoint.
    assertEquals(await checkpointSteps(f.runDir("sft")), [6]);
  });
});

Deno.test("two stages: the second starts from the first's final checkpoint, steps count per stage", async () => {
  await withFixture(async (f) => {
    const file = await f.writeConfig({
      buffer: { total_steps: 2 },
      stages: [
        {
          stage_name: "warm",
          mode: "train",
          algorithm: { algorithm_type: "sft" },
          buffer: { total_steps: 3, train_batch_size: 8 },
        },
        { stage_name: "rl" },
      ],
    }, "two.yaml");
    const lines: string[] = [];
    const summary = await runConfig(await loadConfig(file), { log: (l) => lines.push(l) });
    const runDir = f.runDir("two");
    assertEquals(summary.stages.map((s) => [s.name, s.outcome.steps]), [["warm", 3], ["rl", 2]]);
    assertEquals(summary.stages[0].outcome.finalCheckpoint, `${runDir}/warm/checkpoints/step_3`);
    const policyLines = lines.filter((l) => l.includes("policy from"));
    assertEquals(policyLines.length, 2, lines.join("\n"));
    assertEquals(policyLines[1], `[rl] policy from ${runDir}/warm/checkpoints/step_3`);

    const rows = await metricsRows(runDir);
    const { stages } = await readMetrics(`${runDir}/metrics.jsonl`);
    const train = trainRows(rows);
    // Steps count per stage (as on screen and in checkpoints), each row naming its stage.
    assertEquals(train.map((r) => [stages[rows.indexOf(r)], r.step]), [
      ["warm", 1],
      ["warm", 2],
      ["warm", 3],
      ["rl", 1],
      ["rl", 2],
    ]);
    // Stage 2's rows are rl rows (explore metrics merged), stage 1's are not.
    assertEquals(train.map((r) => "explorer/policy_version" in r), [
      false,
      false,
      false,
      true,
      true,
    ]);
    assertEquals(train.slice(3).map((r) => r["sync/trainer_version"]), [1, 2]);
    const evals = rows.filter((r) => "eval/held_out/accuracy" in r);
    // Startup and end of each stage.
    assertEquals(evals.map((r) => [stages[rows.indexOf(r)], r.step]), [
      ["warm", 0],
      ["warm", 3],
      ["rl", 0],
      ["rl", 2],
    ]);
    // Greedy evals of the same weights (warm's final = rl's initial) agree.
    const same = (r: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(r).filter(([k]) => k.startsWith("eval/")));
    assertEquals(same(evals[2]), same(evals[1]));

    assertEquals((await readJson(`${runDir}/warm/stage_done.json`)).steps, 3);
    assertEquals((await readJson(`${runDir}/rl/stage_done.json`)).steps, 2);
    assertEquals(await checkpointSteps(`${runDir}/warm`), [1, 2, 3]);
    assertEquals(await checkpointSteps(`${runDir}/rl`), [1, 2]);

    // The run directory moved elsewhere (its paths are relative): the finished warm stage is
    // skipped and rl, run again, starts from warm's checkpoint in the new place.
    const moved = `${f.dir}/moved/t/two`;
    await Deno.mkdir(`${f.dir}/moved/t`, { recursive: true });
    await Deno.rename(runDir, moved);
    await Deno.remove(`${moved}/rl`, { recursive: true });
    const again: string[] = [];
    const overrides = [`checkpoint_root_dir=${f.dir}/moved`];
    await runConfig(await loadConfig(file, { overrides }), { log: (l) => again.push(l) });
    assertEquals(again.includes("stage warm: already finished (3 steps), skipped"), true);
    assertEquals(
      again.find((l) => l.includes("policy from")),
      `[rl] policy from ${moved}/warm/checkpoints/step_3`,
    );
  });
});

Deno.test("mode bench after a run evaluates the base model and every checkpoint", async () => {
  await withFixture(async (f) => {
    const file = await f.writeConfig({ buffer: { total_steps: 2 } }, "b.yaml");
    await runConfig(await loadConfig(file), quiet);
    const runDir = f.runDir("b");
    assertEquals(await checkpointSteps(runDir), [1, 2]);
    const bench = await loadConfig(file, { overrides: ["mode=bench"] });
    const summary = await runConfig(bench, quiet);
    assertEquals(summary.runDir, runDir);
    const all = await metricsRows(runDir);
    // Every eval row has mean@k: the training run's (startup, end), then the bench's.
    const evals = all.filter((r) => "eval/held_out/mean@1" in r);
    assertEquals(evals.map((r) => r.step), [0, 2, 0, 1, 2]);
    const rows = evals.slice(2);
    // The training rows stay, once each, and so does the training stage's record.
    assertEquals(trainRows(all).map((r) => r.step), [1, 2]);
    const done = await readJson(`${runDir}/stage_done.json`);
    assertEquals([done.steps, done.final_checkpoint], [2, "checkpoints/step_2"]);
    for (const r of rows) {
      assertEquals(r["eval/held_out/mean@1"], r["eval/held_out/accuracy"]);
      assertEquals(r["eval/held_out/count"], 3);
    }
  });
});
