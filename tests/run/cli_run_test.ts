/** `./rft run` as a subprocess: resume after SIGKILL, config errors, help. */

import { assertEquals } from "../_asserts.ts";
import { runRft } from "../_rft_cli.ts";
import { readExperienceDir } from "../../src/buffer/experience_io.ts";
import { EXPLORER_STATE_FILE, type ExplorerState } from "../../src/explorer/explorer.ts";
import { exists, makeFixture, metricsRows, readJson, trainRows } from "./_fixture.ts";

const LAUNCHER = new URL("../../rft", import.meta.url).pathname;
const ROOT = new URL("../..", import.meta.url).pathname;

Deno.test("rft run killed with SIGKILL after checkpoint step_2 resumes to the end, no step twice", async () => {
  const f = await makeFixture();
  try {
    const section = {
      format: { prompt_key: "prompt", response_key: "answer" },
      rollout_args: { temperature: 0 },
      workflow_args: { use_chat_template: false },
    };
    // Evaluations every step on 72 tasks keep the run going well after step_2 is saved, so the
    // kill lands before the end.
    const file = await f.writeConfig({
      buffer: {
        total_steps: 4,
        explorer_input: {
          eval_tasksets: [
            { name: "a", path: "./data/train.jsonl", ...section },
            { name: "b", path: "./data/sft.jsonl", ...section },
          ],
        },
      },
      explorer: { eval_interval: 1 },
      trainer: { save_interval: 1 },
    }, "resume.yaml");
    const runDir = f.runDir("resume");

    const child = new Deno.Command(LAUNCHER, {
      args: ["run", file],
      cwd: ROOT,
      stdout: "null",
      stderr: "null",
    }).spawn();
    let exited = false;
    const status = child.status.then((s) => {
      exited = true;
      return s;
    });
    const marker = `${runDir}/checkpoints/step_2/trainer_state.json`;
    const deadline = Date.now() + 120_000;
    while (!exited && !(await exists(marker))) {
      if (Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    if (!exited) child.kill("SIGKILL");
    const killed = await status;
    assertEquals(
      killed.signal,
      "SIGKILL",
      `the first run was not killed: ${JSON.stringify(killed)}`,
    );
    assertEquals(await exists(marker), true);
    assertEquals(await exists(`${runDir}/stage_done.json`), false);
    assertEquals(await exists(`${runDir}/checkpoints/step_4/trainer_state.json`), false);
    const atKill = await readExperienceDir(`${runDir}/experiences`);
    const cursorAtKill = await readJson<ExplorerState>(`${runDir}/${EXPLORER_STATE_FILE}`);

    const resumed = await runRft(["run", file]);
    assertEquals(resumed.code, 0, resumed.stderr);
    assertEquals(resumed.stderr.includes("policy from " + runDir + "/checkpoints/step_"), true);

    const rows = await metricsRows(runDir);
    const train = trainRows(rows);
    assertEquals(train.map((r) => r.step), [1, 2, 3, 4]);
    // Resumed from step_2, or step_1 when the kill fell between step_2's rename and
    // latest_checkpoint.txt, or step_3 when that was saved before the kill.
    const from = Number(/policy from .*\/checkpoints\/step_(\d+)/.exec(resumed.stderr)?.[1]);
    assertEquals([1, 2, 3].includes(from), true, resumed.stderr);
    // On-policy versions. The explore metrics of a step explored before the kill but trained
    // after it are lost (they wait in memory for the train step), so only the steps up to the
    // checkpoint resumed from must have them.
    const versions = train.map((r) => [r.step, r["explorer/policy_version"]]);
    for (const r of train) {
      if (r.step <= from || "explorer/policy_version" in r) {
        assertEquals(r["explorer/policy_version"], r.step - 1, JSON.stringify(versions));
      }
    }
    const state = await readJson(`${runDir}/checkpoints/step_4/trainer_state.json`);
    assertEquals(state.step, 4);
    assertEquals((await readJson(`${runDir}/stage_done.json`)).steps, 4);

    // Every step trained on experiences of the policy it had (no step's data twice or late).
    assertEquals(train.map((r) => r["sample/staleness_mean"]), [0, 0, 0, 0]);
    // The buffer retires an eid when a train step takes it, and when the resumed buffer retires
    // it unused, because its explore step is explored again: the experiences the cursor named as
    // pending (a kill between their put and the cursor), and those sampled with weights newer
    // than the checkpoint resumed from (a kill after explore step from + 2 was put, before
    // checkpoint step_(from + 1) was complete), which the buffer refuses. They stay retired so
    // that no later resume hands them out. So the retired eids are the trained ones plus those,
    // each once, every one persisted.
    const retired = state.buffer_retired as string[];
    const trained = train.reduce((s, r) => s + (r["actor/batch_size"] ?? 0), 0);
    assertEquals(trained, 16);
    const pending = new Set(cursorAtKill.pending?.eids);
    const discarded = atKill.experiences.filter((e) => pending.has(e.info.eid));
    const refused = atKill.experiences.filter((e) =>
      e.info.policyVersion > from && !pending.has(e.info.eid)
    );
    assertEquals(train.at(-1)!["buffer/rejected_future"], refused.length);
    const unused = [...discarded, ...refused].map((e) => e.info.eid);
    assertEquals(unused.filter((eid) => !retired.includes(eid)), []);
    assertEquals(retired.length, trained + unused.length);
    assertEquals(new Set(retired).size, retired.length);
    const read = await readExperienceDir(`${runDir}/experiences`);
    const persisted = new Set(read.experiences.map((e) => e.info.eid));
    assertEquals(persisted.size, read.experiences.length, "an experience persisted twice");
    assertEquals(retired.filter((eid) => !persisted.has(eid)), []);
    // The buffer's own record agrees with the final checkpoint's.
    const bufferState = await readJson(`${runDir}/experiences/buffer_state.json`);
    assertEquals((bufferState.retired as string[]).slice().sort(), retired.slice().sort());
  } finally {
    await f.remove();
  }
});

Deno.test("rft run with a bad config exits 2 with one line naming file and line", async () => {
  const f = await makeFixture();
  try {
    const file = await f.writeConfig({ algorithm: { optimizer: { lr: -1 } } }, "bad.yaml");
    const text = await Deno.readTextFile(file);
    const line = text.split("\n").findIndex((l) => l.trim() === "lr: -1") + 1;
    const result = await runRft(["run", file]);
    assertEquals(result.code, 2, result.stderr);
    assertEquals(result.stdout, "");
    assertEquals(
      result.stderr,
      `rft run: ${file}:${line}: algorithm.optimizer.lr: expected a number > 0, found -1\n`,
    );
    assertEquals(await exists(`${f.dir}/runs`), false);

    const missing = await runRft(["run", file, "--plugin-dir", `${f.dir}/no_plugins`]);
    assertEquals(missing.code, 2, missing.stderr);
    assertEquals(
      missing.stderr.startsWith(`rft run: Cannot load plugin ${f.dir}/no_plugins: `),
      true,
      missing.stderr,
    );
    assertEquals(missing.stderr.trim().split("\n").length, 1, missing.stderr);
  } finally {
    await f.remove();
  }
});

Deno.test("rft run --help exits 0 with the usage", async () => {
  const result = await runRft(["run", "--help"]);
  assertEquals(result.code, 0, result.stderr);
  assertEquals(result.stdout.startsWith("Usage: ./rft run CONFIG.yaml"), true, result.stdout);
  assertEquals(result.stdout.includes("--plugin-dir DIR"), true, result.stdout);
  assertEquals(result.stderr, "");
});
