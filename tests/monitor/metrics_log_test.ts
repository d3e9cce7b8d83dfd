import { assertEquals, assertRejects } from "../_asserts.ts";
import { MetricsLog, readMetrics } from "../../src/monitor/metrics_log.ts";

async function withTempDir(fn: (dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "rft_metrics_" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("metrics round-trip: one line per step, NaN and Infinity become null", async () => {
  await withTempDir(async (dir) => {
    const log = await MetricsLog.open(`${dir}/run`);
    await log.append(1, { "actor/loss": 0.5, "actor/kl": NaN }, 100);
    await log.append(2, { "actor/loss": 0.25, "rollout/reward_mean": Infinity }, 101.5);
    log.close();
    const text = await Deno.readTextFile(`${dir}/run/metrics.jsonl`);
    assertEquals(text.split("\n")[0], '{"step":1,"time":100,"actor/loss":0.5,"actor/kl":null}');
    assertEquals(await readMetrics(log.path), {
      rows: [
        { step: 1, time: 100, "actor/loss": 0.5, "actor/kl": null },
        { step: 2, time: 101.5, "actor/loss": 0.25, "rollout/reward_mean": null },
      ],
      stages: [undefined, undefined],
      unreadable: 0,
    });
  });
});

Deno.test("metrics rows name their stage; the reader returns it beside the numeric row", async () => {
  await withTempDir(async (dir) => {
    const log = await MetricsLog.open(dir);
    await log.append(1, { a: 1 }, 10, "sft");
    await log.append(1, { a: 2 }, 11, "grpo");
    log.close();
    const text = await Deno.readTextFile(log.path);
    assertEquals(text.split("\n")[1], '{"step":1,"stage":"grpo","time":11,"a":2}');
    assertEquals(await readMetrics(log.path), {
      rows: [{ step: 1, time: 10, a: 1 }, { step: 1, time: 11, a: 2 }],
      stages: ["sft", "grpo"],
      unreadable: 0,
    });
  });
});

Deno.test("readMetrics skips and counts a truncated last line", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/metrics.jsonl`;
    await Deno.writeTextFile(path, '{"step":1,"time":1,"a":1}\n\n{"step":2,"time":2,"a"');
    assertEquals(await readMetrics(path), {
      rows: [{ step: 1, time: 1, a: 1 }],
      stages: [undefined],
      unreadable: 1,
    });
  });
});

Deno.test("reopening appends after dropping a partial last line", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/metrics.jsonl`, '{"step":1,"time":1}\n{"step":2,"ti');
    const log = await MetricsLog.open(dir);
    await log.append(2, { a: 2 }, 2);
    log.close();
    assertEquals(await readMetrics(log.path), {
      rows: [{ step: 1, time: 1 }, { step: 2, time: 2, a: 2 }],
      stages: [undefined, undefined],
      unreadable: 0,
    });
  });
});

Deno.test("truncateAfterStep drops later rows so a resumed run does not repeat steps", async () => {
  await withTempDir(async (dir) => {
    const first = await MetricsLog.open(dir);
    for (let step = 1; step <= 5; step++) await first.append(step, { a: step }, step);
    first.close();
    const resumed = await MetricsLog.open(dir, { truncateAfterStep: 3 });
    await resumed.append(4, { a: 40 }, 40);
    resumed.close();
    const { rows } = await readMetrics(resumed.path);
    assertEquals(rows.map((r) => [r.step, r.a]), [[1, 1], [2, 2], [3, 3], [4, 40]]);
  });
});

Deno.test("step and time are reserved metric names", async () => {
  await withTempDir(async (dir) => {
    const log = await MetricsLog.open(dir);
    try {
      await assertRejects(() => log.append(1, { time: 3 }), Error, '"time" is reserved');
    } finally {
      log.close();
    }
  });
});
