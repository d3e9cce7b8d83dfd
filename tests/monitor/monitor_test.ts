import { assertEquals } from "../_asserts.ts";
import { Monitor, monitorNames } from "../../src/monitor/monitor.ts";
import { readMetrics } from "../../src/monitor/metrics_log.ts";
import { readEvents } from "../../src/monitor/tensorboard.ts";
import { openWandbSink, type WandbModule } from "../../src/monitor/wandb_sink.ts";
import { setLineSink } from "../../src/util/status_lines.ts";

/** The scalar events of the one event file in `dir`. */
async function events(dir: string) {
  const [file] = [...Deno.readDirSync(dir)].filter((e) => e.isFile).map((e) => e.name);
  return (await readEvents(`${dir}/${file}`)).events.map((e) => [e.step, e.scalars]);
}

Deno.test("Monitor writes metrics.jsonl and TensorBoard scalars, and resumes cleanly", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rft_monitor_" });
  try {
    const monitor = await Monitor.open(dir, { tensorboard: true, console: false });
    assertEquals(monitor.names, ["jsonl", "tensorboard"]);
    await monitor.log(1, { "actor/loss": 1 });
    await monitor.log(2, { "actor/loss": 0.5 });
    await monitor.close();
    const resumed = await Monitor.open(dir, { resumeAfterStep: 1 });
    await resumed.log(2, { "actor/loss": 0.75 });
    await resumed.close();
    const { rows } = await readMetrics(`${dir}/metrics.jsonl`);
    assertEquals(rows.map((r) => [r.step, r["actor/loss"]]), [[1, 1], [2, 0.75]]);
    assertEquals(await events(`${dir}/tensorboard`), [
      [1, { "actor/loss": 1 }],
      [2, { "actor/loss": 0.5 }],
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Monitor of stages: rows name their stage, TensorBoard has a run per stage, a resume keeps earlier stages", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rft_monitor_" });
  try {
    const monitor = await Monitor.open(dir, { tensorboard: true });
    await monitor.beginStage({ name: "sft", totalSteps: 2, startStep: 0 });
    for (const step of [1, 2]) await monitor.log(step, { "actor/loss": step });
    await monitor.beginStage({ name: "grpo", totalSteps: 3, startStep: 0 });
    for (const step of [1, 2, 3]) await monitor.log(step, { "actor/loss": 10 * step });
    await monitor.close();
    assertEquals(await events(`${dir}/tensorboard/sft`), [[1, { "actor/loss": 1 }], [2, {
      "actor/loss": 2,
    }]]);
    assertEquals((await events(`${dir}/tensorboard/grpo`)).length, 3);
    // Resuming grpo after its step 1 keeps sft's rows and grpo's first.
    const resumed = await Monitor.open(dir, { resumeAfterStep: 1, resumeStage: "grpo" });
    await resumed.beginStage({ name: "grpo", totalSteps: 3, startStep: 1 });
    await resumed.log(2, { "actor/loss": 99 });
    await resumed.close();
    const { rows, stages } = await readMetrics(`${dir}/metrics.jsonl`);
    assertEquals(rows.map((r, i) => [stages[i], r.step, r["actor/loss"]]), [
      ["sft", 1, 1],
      ["sft", 2, 2],
      ["grpo", 1, 10],
      ["grpo", 2, 99],
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("asking for a monitor never drops another; W&B that cannot open says why in one line", async () => {
  assertEquals(monitorNames({ tensorboard: true, console: true, monitors: ["wandb"] }), [
    "jsonl",
    "console",
    "tensorboard",
    "wandb",
  ]);
  assertEquals(monitorNames({ monitors: ["tensorboard", "jsonl"] }), ["jsonl", "tensorboard"]);
  const dir = await Deno.makeTempDir({ prefix: "rft_monitor_" });
  const lines: string[] = [];
  const previous = setLineSink({
    write: (t) => lines.push(t),
    isTerminal: false,
    columns: () => 80,
  });
  const key = Deno.env.get("WANDB_API_KEY");
  Deno.env.delete("WANDB_API_KEY");
  try {
    const monitor = await Monitor.open(dir, { tensorboard: true, monitors: ["wandb"] });
    assertEquals(monitor.names, ["jsonl", "tensorboard"]);
    assertEquals(lines, [
      "monitor wandb is off: WANDB_API_KEY is not set; jsonl, tensorboard go on\n",
    ]);
    await monitor.log(1, { a: 1 });
    await monitor.close();
    assertEquals((await readMetrics(`${dir}/metrics.jsonl`)).rows.length, 1);
  } finally {
    if (key !== undefined) Deno.env.set("WANDB_API_KEY", key);
    setLineSink(previous);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("W&B: a missing package or a failing init is a reason, a working one gets each row under its stage", async () => {
  const env = (name: string) => (name === "WANDB_API_KEY" ? "k" : undefined);
  const run = { project: "p", name: "n", runDir: "/tmp/r" };
  const missing = await openWandbSink(run, () => Promise.reject(new Error("not found\nmore")), env);
  assertEquals(missing, { unavailable: "cannot import @wandb/sdk (not found)" });
  const logged: [Record<string, unknown>, number | undefined][] = [];
  let finished = false;
  const fake = (init: () => Promise<unknown>): WandbModule => ({
    init,
    log: (data, step) => logged.push([data, step]),
    finish: () => Promise.resolve(void (finished = true)),
  });
  const offline = await openWandbSink(
    run,
    () => Promise.resolve(fake(() => Promise.reject(new Error("network down")))),
    env,
  );
  assertEquals(offline, { unavailable: "wandb.init failed (network down)" });
  const opened = await openWandbSink(
    run,
    () => Promise.resolve(fake(() => Promise.resolve({}))),
    env,
  );
  if (!("sink" in opened)) throw new Error(opened.unavailable);
  await opened.sink.log({ step: 3, stage: "grpo", time: 0, metrics: { "actor/loss": 0.5 } });
  await opened.sink.log({ step: 4, time: 0, metrics: { "actor/loss": 0.25 } });
  await opened.sink.close();
  assertEquals(logged, [[{ "grpo/actor/loss": 0.5 }, 3], [{ "actor/loss": 0.25 }, 4]]);
  assertEquals(finished, true);
});
