import { assertEquals } from "../_asserts.ts";
import { Monitor } from "../../src/monitor/monitor.ts";
import { readMetrics } from "../../src/monitor/metrics_log.ts";
import { readEvents } from "../../src/monitor/tensorboard.ts";

Deno.test("Monitor writes metrics.jsonl and TensorBoard scalars, and resumes cleanly", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rft_monitor_" });
  try {
    const monitor = await Monitor.open(dir, { tensorboard: true, console: false });
    await monitor.log(1, { "actor/loss": 1 });
    await monitor.log(2, { "actor/loss": 0.5 });
    monitor.close();
    const resumed = await Monitor.open(dir, {
      tensorboard: false,
      console: false,
      resumeAfterStep: 1,
    });
    await resumed.log(2, { "actor/loss": 0.75 });
    resumed.close();
    const { rows } = await readMetrics(`${dir}/metrics.jsonl`);
    assertEquals(rows.map((r) => [r.step, r["actor/loss"]]), [[1, 1], [2, 0.75]]);
    const [eventFile] = [...Deno.readDirSync(`${dir}/tensorboard`)].map((e) => e.name);
    const { events } = await readEvents(`${dir}/tensorboard/${eventFile}`);
    assertEquals(events.map((e) => [e.step, e.scalars]), [
      [1, { "actor/loss": 1 }],
      [2, { "actor/loss": 0.5 }],
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
