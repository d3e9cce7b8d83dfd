/**
 * The acceptance test of cluster runs: one nats-server, a trainer (`./rft run` mode train) and
 * two explorer processes (mode explore) run a short GRPO of the built-in example
 * (tests/cluster/addition_grpo.yaml: 12 tasks, 2 per step) to the end; the first explorer is
 * killed with SIGKILL after its first step, holding its next batch, and a third explorer is
 * started. Every task is explored, the trained experience ids are unique, and every train step
 * gets its explore step's metrics with the id of the explorer that ran it.
 */

import { assertEquals } from "../_asserts.ts";
import { readExperienceDir } from "../../src/buffer/experience_io.ts";
import { readMetrics } from "../../src/monitor/metrics_log.ts";
import { inTempDir } from "../_temp_dir.ts";
import { startNatsServer } from "../../bench/_nats_server.ts";
import { clusterRunDir, spawnRft, writeExampleTasks } from "../../bench/_cluster_processes.ts";

const TASKS = 12;
const STEPS = TASKS / 2;
const REPEAT = 4;
/** Far above the run's time: past it the run is taken as hung. */
const HANG_MS = 300_000;

/** Waits until `path` (a metrics.jsonl) has a row. */
async function untilMetricsRow(path: string, child: Deno.ChildProcess): Promise<void> {
  let exited = false;
  child.status.then(() => exited = true);
  for (;;) {
    const text = await Deno.readTextFile(path).catch(() => "");
    if (text.trim()) return;
    if (exited) throw new Error(`the explorer ended before its first step's row in ${path}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

Deno.test("a trainer and explorer processes over NATS finish the run; a SIGKILLed explorer loses nothing", async () => {
  await using nats = await startNatsServer();
  await inTempDir("rft_cluster_", async (dir) => {
    const tasks = `${dir}/tasks.jsonl`;
    await writeExampleTasks(tasks, TASKS);
    const trainer = spawnRft("train", `${dir}/trainer`, tasks, nats.url);
    const first = spawnRft("explore", `${dir}/e1`, tasks, nats.url);
    const second = spawnRft("explore", `${dir}/e2`, tasks, nats.url);
    await untilMetricsRow(`${clusterRunDir(`${dir}/e1`)}/metrics.jsonl`, first);
    first.kill("SIGKILL");
    assertEquals((await first.output()).signal, "SIGKILL");
    const third = spawnRft("explore", `${dir}/e3`, tasks, nats.url);
    // A lost batch would leave the trainer waiting forever: end the processes so the test fails.
    const hang = setTimeout(() => [trainer, second, third].forEach((c) => c.kill()), HANG_MS);
    const decode = (b: Uint8Array) => new TextDecoder().decode(b);
    const survivors = { trainer, "explorer 2": second, "explorer 3": third };
    const outputs = await Promise.all(Object.values(survivors).map((child) => child.output()));
    clearTimeout(hang);
    const logs = Object.keys(survivors).map((name, k) =>
      `--- ${name} (exit ${outputs[k].code}):\n${decode(outputs[k].stdout)}\n${
        decode(outputs[k].stderr)
      }`
    ).join("\n");
    assertEquals(outputs.map((o) => o.code), [0, 0, 0], `a process failed:\n${logs}`);

    const { experiences } = await readExperienceDir(
      `${clusterRunDir(`${dir}/trainer`)}/experiences`,
    );
    const eids = experiences.map((e) => e.info.eid);
    assertEquals(new Set(eids).size, eids.length, "an experience was trained twice");
    assertEquals(experiences.length, TASKS * REPEAT);
    const explored = new Set(experiences.map((e) => e.info.taskId));
    assertEquals(explored.size, TASKS);
    assertEquals([...explored].sort(), Array.from({ length: TASKS }, (_, i) => `0.${i}`).sort());

    const { rows: trained } = await readMetrics(`${clusterRunDir(`${dir}/trainer`)}/metrics.jsonl`);
    const steps = trained.filter((r) => "actor/loss" in r);
    assertEquals(steps.map((r) => r.step), Array.from({ length: STEPS }, (_, i) => i + 1));
    for (const row of steps) {
      assertEquals((row["explorer/id"] ?? -1) >= 0, true, `step ${row.step} has no explorer id`);
      assertEquals(row["explorer/tasks"], 2);
    }
  });
});
