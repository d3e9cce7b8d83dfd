/**
 * Trinity's async example (examples/async_gsm8k): `trainer.yaml` and `explorer.yaml` started as
 * its run.sh starts them, two `./rft run` processes from the tree's root with no cluster
 * configured, in either order; and a later release's pair of the same shape (M2PO). The trainer starts a nats-server, the explorer finds it through
 * the run directory, and the trainer trains every step the explorer explores. Without
 * nats-server on the PATH the trainer stops at start with one line naming how to connect them,
 * exit 2, nothing marked finished. `--set` keys only shrink steps, batch and lengths; the
 * environment names the model, data and run root.
 */

import { assertEquals } from "../_asserts.ts";
import { readMetrics } from "../../src/monitor/metrics_log.ts";
import { inTempDir } from "../_temp_dir.ts";
import { writeTrinityTree } from "./_tree.ts";

const REPO = new URL("../../", import.meta.url).pathname;
const LAUNCHER = `${REPO}rft`;
const STEPS = 2;
const SETS = [
  `buffer.total_steps=${STEPS}`,
  "buffer.batch_size=1",
  "buffer.train_batch_size=2",
  "algorithm.repeat_times=2",
  "model.max_response_tokens=4",
];
/** Far above a pair's time: past it the pair is taken as hung. */
const HANG_MS = 300_000;

/** A pair of configs of one run, where they put the run, and the start orders tried. */
interface Pair {
  trainer: string;
  explorer: string;
  /** Under the root TRINITY_CHECKPOINT_ROOT_DIR names. */
  run: string;
  orders: readonly ("trainer first" | "explorer first")[];
  /** A metric every train row of the pair's loss has. */
  metric: string;
}

const PAIRS: readonly Pair[] = [
  {
    trainer: "examples/async_gsm8k/trainer.yaml",
    explorer: "examples/async_gsm8k/explorer.yaml",
    run: "Trinity-RFT-gsm8k/async-qwen2.5-1.5B-gsm8k",
    orders: ["trainer first", "explorer first"],
    metric: "actor/pg_clipfrac",
  },
  // A later release's pair (M2PO): its trainer's loss masks over each mini-batch.
  {
    trainer: "later/m2po_gsm8k_trainer.yaml",
    explorer: "later/m2po_gsm8k_explorer.yaml",
    run: "Trinity-RFT-M2PO/m2po-qwen2.5-1.5B-gsm8k",
    orders: ["trainer first"],
    metric: "actor/m2_before",
  },
];
const TRAINER = PAIRS[0].trainer;

const decode = (b: Uint8Array) => new TextDecoder().decode(b);

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

async function until(what: string, check: () => Promise<boolean>, child: Deno.ChildProcess) {
  let exited = false;
  child.status.then(() => exited = true);
  while (!await check()) {
    if (exited) throw new Error(`the first process ended before ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Runs `pair` in `order` under `root`; returns the two processes' logs. */
async function runPair(
  pair: Pair,
  order: Pair["orders"][number],
  tree: Awaited<ReturnType<typeof writeTrinityTree>>,
  root: string,
): Promise<string> {
  const env = { ...tree.env, TRINITY_TASKSET_PATH: tree.data.gsm8k };
  const runDir = `${root}/${pair.run}`;
  const spawn = (config: string) =>
    new Deno.Command(LAUNCHER, {
      args: ["run", config, ...SETS.flatMap((s) => ["--set", s])],
      cwd: tree.root,
      env: { ...env, TRINITY_CHECKPOINT_ROOT_DIR: root },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  let trainer: Deno.ChildProcess, explorer: Deno.ChildProcess;
  if (order === "trainer first") {
    trainer = spawn(pair.trainer);
    await until("its NATS server", () => exists(`${runDir}/nats.json`), trainer);
    explorer = spawn(pair.explorer);
  } else {
    explorer = spawn(pair.explorer);
    await until("it waited", () => exists(`${runDir}/explorer/config.yaml`), explorer);
    trainer = spawn(pair.trainer);
  }
  const hang = setTimeout(() => [trainer, explorer].forEach((c) => c.kill()), HANG_MS);
  const [t, e] = await Promise.all([trainer.output(), explorer.output()]);
  clearTimeout(hang);
  const logs = `--- trainer:\n${decode(t.stderr)}\n--- explorer:\n${decode(e.stderr)}`;
  assertEquals([t.code, e.code], [0, 0], `${order}: a process failed:\n${logs}`);
  return logs;
}

for (const pair of PAIRS) {
  Deno.test(`${pair.trainer} and ${pair.explorer} as two processes (${pair.orders.join(", ")}): every step trained`, async () => {
    await inTempDir("rft_async_pair_", async (dir) => {
      const tree = await writeTrinityTree(dir);
      for (const order of pair.orders) {
        const root = `${dir}/${order.replace(" ", "_")}`;
        const runDir = `${root}/${pair.run}`;
        const logs = await runPair(pair, order, tree, root);
        const { rows } = await readMetrics(`${runDir}/metrics.jsonl`);
        const trained = rows.filter((r) => "actor/loss" in r);
        assertEquals(trained.map((r) => r.step), [1, 2], `${order}:\n${logs}`);
        for (const row of trained) {
          assertEquals(row["explorer/id"], 0);
          assertEquals(Number.isFinite(row[pair.metric]), true, `${pair.metric} in ${order}`);
        }
        const explored = (await readMetrics(`${runDir}/explorer/metrics.jsonl`)).rows;
        assertEquals(explored.filter((r) => "rollout/reward_mean" in r).length, STEPS);
        const done = JSON.parse(await Deno.readTextFile(`${runDir}/stage_done.json`));
        assertEquals([done.steps, done.final_checkpoint], [STEPS, `checkpoints/step_${STEPS}`]);
        // The server is stopped and its file removed.
        assertEquals(await exists(`${runDir}/nats.json`), false);
      }
    });
  });
}

Deno.test("async_gsm8k: without nats-server the trainer names how to connect them, exit 2, nothing finished", async () => {
  await inTempDir("rft_async_pair_", async (dir) => {
    const tree = await writeTrinityTree(dir);
    // The launcher's own command, with a PATH where no nats-server is.
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-P",
        "--quiet",
        `--config=${REPO}deno.json`,
        `${REPO}src/cli/main.ts`,
        "run",
        TRAINER,
        ...SETS.flatMap((s) => ["--set", s]),
      ],
      cwd: tree.root,
      env: {
        ...tree.env,
        TRINITY_TASKSET_PATH: tree.data.gsm8k,
        TRINITY_CHECKPOINT_ROOT_DIR: `${dir}/runs`,
        PATH: "/nonexistent",
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const lines = decode(out.stderr).trim().split("\n");
    assertEquals(out.code, 2, lines.join("\n"));
    const last = lines.at(-1) ?? "";
    assertEquals(
      last.endsWith(
        "trainer.yaml: this trainer and its explorer process (a queue experience buffer in mode train) meet over a NATS server the trainer starts, and nats-server is not on the PATH: install it (apt-get install nats-server), or start one and set RFT_NATS_URL=nats://host:4222 for both processes",
      ),
      true,
      last,
    );
    assertEquals(await exists(`${dir}/runs`), false);
  });
});
