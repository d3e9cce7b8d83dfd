/**
 * Trinity-RFT's example configs (tests/trinity/configs/, unchanged) run with `./rft run`, given
 * Trinity's environment variables pointing at the tiny Qwen model and the Hub-layout datasets
 * of `_fixture.ts`; `--set` only makes each run small (steps, batch, rollouts, response
 * length). Each test checks the steps ran, the metrics (finite loss, rewards), the checkpoint
 * and the one warning line of ignored Trinity keys.
 */

import { assertEquals } from "../_asserts.ts";
import { type MetricsRow, readMetrics } from "../../src/monitor/metrics_log.ts";
import { writeTrinityFixture } from "./_fixture.ts";

const LAUNCHER = new URL("../../rft", import.meta.url).pathname;
const CONFIGS = new URL("./configs", import.meta.url).pathname;

/** The fixtures, written once for the file and removed when the process ends. */
const fixtureDir = Deno.makeTempDirSync({ prefix: "rft-trinity-" });
globalThis.addEventListener("unload", () => Deno.removeSync(fixtureDir, { recursive: true }));
const fixture = writeTrinityFixture(fixtureDir);

/** `--set` values that make a GSM8K RL run small. */
const SMALL_RL = [
  "buffer.total_steps=1",
  "buffer.batch_size=1",
  "algorithm.repeat_times=2",
  "model.max_response_tokens=4",
];

/**
 * Runs `./rft run configs/<file>` with the fixtures' environment; returns its checkpoint root
 * and stderr. Throws with the stderr unless it exits `expectCode`.
 */
async function runExample(file: string, sets: readonly string[], expectCode = 0) {
  const { dir, env } = await fixture;
  const root = `${dir}/checkpoints-${file.replace(/\.yaml$/, "")}`;
  const out = await new Deno.Command(LAUNCHER, {
    args: ["run", `${CONFIGS}/${file}`, ...sets.flatMap((s) => ["--set", s])],
    cwd: dir,
    env: { ...env, TRINITY_CHECKPOINT_ROOT_DIR: root },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  if (out.code !== expectCode) throw new Error(`rft run ${file} exited ${out.code}:\n${stderr}`);
  return { root, stderr };
}

/** The rows of `<runDir>/metrics.jsonl`. */
async function metrics(runDir: string): Promise<MetricsRow[]> {
  const { rows, unreadable } = await readMetrics(`${runDir}/metrics.jsonl`);
  assertEquals(unreadable, 0);
  return rows;
}

/** Asserts one train step with a finite loss and a checkpoint of that step. */
async function assertTrained(runDir: string, steps: number): Promise<MetricsRow[]> {
  const rows = await metrics(runDir);
  const train = rows.filter((r) => "actor/loss" in r);
  assertEquals(train.length, steps, `train rows of ${runDir}`);
  for (const row of train) {
    assertEquals(Number.isFinite(row["actor/loss"]), true, `actor/loss ${row["actor/loss"]}`);
  }
  const checkpoint = `${runDir}/checkpoints/step_${steps}`;
  assertEquals((await Deno.stat(`${checkpoint}/model.safetensors`)).isFile, true);
  return rows;
}

/**
 * Asserts the `rollouts` rollouts of step 1 were scored `right` (one answered right, one wrong:
 * the tiny model answers 6 or 7 and the task's answer is 6), that this reached the gradient,
 * and that the eval taskset `name` was scored.
 */
function assertRewarded(
  rows: readonly MetricsRow[],
  rollouts: number,
  right: number,
  wrong: number,
  name: string,
): void {
  const step = rows.find((r) => r.step === 1 && "rollout/count" in r)!;
  assertEquals(step["rollout/count"], rollouts);
  assertEquals([step["rollout/reward_max"], step["rollout/reward_min"]], [right, wrong]);
  assertEquals(step["rollout/accuracy"], 0.5);
  assertEquals((step["actor/grad_norm"] ?? 0) > 0, true, `grad norm ${step["actor/grad_norm"]}`);
  const evals = rows.filter((r) => `eval/${name}/count` in r);
  assertEquals(evals.length, 2, "evaluated at the start and the end");
  for (const r of evals) assertEquals(Number.isFinite(r[`eval/${name}/reward_mean`]), true);
}

/** The ignored-keys warning lines of a run's stderr. */
function ignoredLines(stderr: string): string[] {
  return stderr.split("\n").filter((l) => l.startsWith("ignored Trinity keys: "));
}

for (const algorithm of ["grpo", "rloo", "gspo", "reinforceplusplus", "cispo", "sapo"]) {
  Deno.test(`Trinity example ${algorithm}_gsm8k runs unchanged`, async () => {
    const { root, stderr } = await runExample(`${algorithm}_gsm8k.yaml`, SMALL_RL);
    const project = `${root}/Trinity-RFT-gsm8k`;
    const name = algorithm === "grpo" ? "qwen2.5-1.5B-gsm8k" : `qwen2.5-1.5B-gsm8k-${algorithm}`;
    const rows = await assertTrained(`${project}/${name}`, 1);
    assertRewarded(rows, 2, 1, 0, "gsm8k-eval");
    assertIgnored(stderr, ["cluster", "explorer.rollout_model.tensor_parallel_size"]);
    assertEquals(stderr.includes('experience_buffer.path "sqlite:///gsm8k.db"'), true);
  });
}

/** Asserts one `ignored Trinity keys:` line naming each of `keys`. */
function assertIgnored(stderr: string, keys: readonly string[]): void {
  const lines = ignoredLines(stderr);
  assertEquals(lines.length, 1, stderr);
  for (const key of keys) assertEquals(lines[0].includes(key), true, `${key} in ${lines[0]}`);
}

Deno.test("Trinity example dapo_math runs unchanged: Hub cache data, DAPO workflow, reward and operators", async () => {
  const { root, stderr } = await runExample("dapo_math.yaml", SMALL_RL);
  const rows = await assertTrained(`${root}/Trinity-RFT-example/dapo`, 1);
  // math_dapo_reward: +1 / -1; the group differs, so dapo_dynamic_sampling keeps it.
  assertRewarded(rows, 2, 1, -1, "AIME2024");
  const step = rows.find((r) => "rollout/count" in r)!;
  assertEquals(step["explorer/kept_groups"], 1);
  assertEquals(step["pipeline/dapo_dynamic_sampling/filtered_count"], 0);
  assertEquals(step["pipeline/mask_response_truncated/masked_truncated_count"], 0);
  assertIgnored(stderr, ["cluster", "trainer.use_dynamic_bsz"]);
});

Deno.test("Trinity example sft_mot runs unchanged: chat SFT from a sharded Hub-cache subset", async () => {
  const { root, stderr } = await runExample("sft_mot.yaml", [
    "buffer.total_steps=1",
    "buffer.train_batch_size=2",
  ]);
  const rows = await assertTrained(`${root}/Trinity-RFT-example/sft_mot`, 1);
  assertEquals(rows[0]["actor/batch_size"], 2);
  assertIgnored(stderr, ["cluster", "buffer.max_retry_times", "trainer.trainer_config"]);
});

Deno.test("Trinity example rloo_gsm8k with its SFT warm-up stage uncommented runs both stages", async () => {
  const { root } = await runExample("rloo_gsm8k_sft_warmup.yaml", [
    "stages[0].buffer.total_steps=1",
    "stages[0].buffer.train_batch_size=2",
    ...SMALL_RL,
  ]);
  const run = `${root}/Trinity-RFT-gsm8k/qwen2.5-1.5B-gsm8k-rloo`;
  const sft = (await metrics(run)).filter((r) => "actor/loss" in r);
  assertEquals(sft.length, 2, "one SFT step, one RL step");
  assertEquals(
    (await Deno.stat(`${run}/sft_warmup/checkpoints/step_1/model.safetensors`)).isFile,
    true,
  );
  assertEquals((await Deno.stat(`${run}/rft/checkpoints`)).isDirectory, true);
  const done = JSON.parse(await Deno.readTextFile(`${run}/rft/stage_done.json`));
  assertEquals(done.steps, 1);
});
