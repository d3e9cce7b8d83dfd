/**
 * The built-in example (examples/addition/config.yaml), shortened with `--set` overrides to a
 * couple of steps per stage: it runs end to end and leaves metrics, checkpoints and experiences;
 * the SFT stage is deterministic (same seed, same numbers).
 */

import { assertEquals } from "../_asserts.ts";
import { loadConfig } from "../../src/config/load_config.ts";
import { readExperienceDir } from "../../src/buffer/experience_io.ts";
import { readMetrics } from "../../src/monitor/metrics_log.ts";
import { runConfig } from "../../src/run/run.ts";
import { listCheckpoints } from "../../src/trainer/checkpoint.ts";

const CONFIG = new URL("../../examples/addition/config.yaml", import.meta.url).pathname;

/** Runs the example shortened into `root`; returns the run directory. */
async function runShort(root: string, name: string): Promise<string> {
  const config = await loadConfig(CONFIG, {
    overrides: [
      `checkpoint_root_dir=${root}`,
      `name=${name}`,
      "stages[0].buffer.total_steps=3",
      "stages[0].explorer.eval_interval=0",
      "stages[1].buffer.total_steps=2",
      "stages[1].buffer.batch_size=4",
      "monitor.console=false",
      "monitor.tensorboard=false",
    ],
  });
  const summary = await runConfig(config, { log: () => {} });
  return summary.runDir;
}

Deno.test("the addition example runs SFT then GRPO and leaves metrics, checkpoints and experiences", async () => {
  const root = await Deno.makeTempDir();
  const runDir = await runShort(root, "a");
  const { rows, stages } = await readMetrics(`${runDir}/metrics.jsonl`);
  const steps = (key: string) =>
    rows.flatMap((r, i) => (key in r ? [`${stages[i]} ${r.step}`] : []));
  // Steps count per stage. SFT: eval at start (0) and end (3); GRPO: at its start and end (2).
  assertEquals(steps("eval/held_out/accuracy"), ["sft 0", "sft 3", "grpo 0", "grpo 2"]);
  assertEquals(steps("actor/loss"), ["sft 1", "sft 2", "sft 3", "grpo 1", "grpo 2"]);
  assertEquals(rows.filter((r) => "rollout/reward_mean" in r).length, 2);
  assertEquals((await listCheckpoints(`${runDir}/sft`)).map((c) => c.step), [3]);
  assertEquals((await listCheckpoints(`${runDir}/grpo`)).map((c) => c.step), [2]);
  const { experiences } = await readExperienceDir(`${runDir}/grpo/experiences`);
  assertEquals(experiences.length, 2 * 4 * 8); // steps x tasks x repeat_times
  assertEquals(experiences.every((e) => e.actionMask.some((m) => m === 1)), true);
  await Deno.remove(root, { recursive: true });
});

Deno.test("the addition example's SFT stage gives the same numbers on every run", async () => {
  const root = await Deno.makeTempDir();
  const losses = async (name: string) => {
    const runDir = await runShort(root, name);
    const { rows, stages } = await readMetrics(`${runDir}/metrics.jsonl`);
    return rows.filter((r, i) => stages[i] === "sft" && "actor/loss" in r)
      .map((r) => r["actor/loss"]);
  };
  const first = await losses("b");
  assertEquals(first.length, 3);
  assertEquals(await losses("c"), first);
  await Deno.remove(root, { recursive: true });
});
