/**
 * The built-in example's SFT -> GRPO config (examples/addition/config.yaml), the same file on
 * three processes over one nats-server: the trainer (`--set mode=train`) runs the SFT stage
 * alone, then the GRPO stage's trainer; the two explorers (`--set mode=explore`) skip the SFT
 * stage and join the GRPO stage, starting from the weights the trainer publishes (its SFT
 * result). Then an explorer started after the run has nothing left to do and exits 0. Steps,
 * batch and run roots are the only `--set` keys.
 */

import { assertEquals } from "../_asserts.ts";
import { readMetrics } from "../../src/monitor/metrics_log.ts";
import { inTempDir } from "../_temp_dir.ts";
import { startNatsServer } from "../../bench/_nats_server.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const CONFIG = "examples/addition/config.yaml";
const STEPS = 2;
/** Far above the run's time: past it the run is taken as hung. */
const HANG_MS = 400_000;

/** `./rft run` of the example as `mode`, its run under `root`. */
function spawn(mode: "train" | "explore", root: string, url: string): Deno.ChildProcess {
  const sets = [
    `mode=${mode}`,
    `checkpoint_root_dir=${root}`,
    `buffer.total_steps=${STEPS}`,
    "buffer.batch_size=4",
  ];
  return new Deno.Command(`${ROOT}rft`, {
    args: ["run", CONFIG, ...sets.flatMap((s) => ["--set", s])],
    cwd: ROOT,
    env: { RFT_NATS_URL: url },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

const decode = (b: Uint8Array) => new TextDecoder().decode(b);

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

Deno.test("the example's SFT -> GRPO config on a trainer and two explorers, one file for all, completes", async () => {
  await using nats = await startNatsServer();
  await inTempDir("rft_stages_cluster_", async (dir) => {
    const names = ["trainer", "explorer 1", "explorer 2"];
    const roots = [`${dir}/t`, `${dir}/e1`, `${dir}/e2`];
    const children = [
      spawn("train", roots[0], nats.url),
      spawn("explore", roots[1], nats.url),
      spawn("explore", roots[2], nats.url),
    ];
    const hang = setTimeout(() => children.forEach((c) => c.kill()), HANG_MS);
    const outputs = await Promise.all(children.map((c) => c.output()));
    clearTimeout(hang);
    const logs = names.map((name, k) =>
      `--- ${name} (exit ${outputs[k].code}):\n${decode(outputs[k].stderr)}`
    ).join("\n");
    assertEquals(outputs.map((o) => o.code), [0, 0, 0], `a process failed:\n${logs}`);

    const run = (root: string) => `${root}/addition/sft_then_grpo`;
    const done = async (root: string, stage: string) =>
      JSON.parse(await Deno.readTextFile(`${run(root)}/${stage}/stage_done.json`));
    assertEquals((await done(roots[0], "sft")).steps, STEPS);
    assertEquals((await done(roots[0], "grpo")).steps, STEPS);
    // The explorers skipped the SFT stage (not recorded as theirs) and explored the GRPO one.
    for (const [k, root] of roots.slice(1).entries()) {
      assertEquals(await exists(`${run(root)}/sft/stage_done.json`), false);
      const stderr = decode(outputs[k + 1].stderr);
      assertEquals(
        stderr.includes(
          "[sft] sft trains on a dataset: the trainer runs this stage; this explorer skips it",
        ),
        true,
        stderr,
      );
    }
    const explored = await Promise.all(
      roots.slice(1).map(async (root) => (await done(root, "grpo")).steps),
    );
    assertEquals(explored.reduce((a, b) => a + b, 0), STEPS);

    // Every GRPO train step got its explore step, run by one of the explorers.
    const { rows, stages } = await readMetrics(`${run(roots[0])}/metrics.jsonl`);
    const grpo = rows.filter((r, i) => stages[i] === "grpo" && "actor/loss" in r);
    assertEquals(grpo.map((r) => r.step), [1, 2]);
    for (const row of grpo) assertEquals((row["explorer/id"] ?? -1) >= 0, true);

    // A late explorer finds the run done: nothing left to do, exit 0.
    const late = await spawn("explore", `${dir}/e3`, nats.url).output();
    const lateErr = decode(late.stderr);
    assertEquals(late.code, 0, lateErr);
    assertEquals(lateErr.includes("ran 0 step(s); the run is done"), true, lateErr);
  });
});
