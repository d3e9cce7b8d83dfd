/**
 * `deno run -A bench/cluster.ts`: cluster runs over NATS JetStream (needs `nats-server` on PATH;
 * each measurement starts its own). Two tables. Weight broadcast per version, in f32 and bf16:
 * publishing (one readback of every parameter, bf16 packing, the object put in 1 MB chunks, the
 * KV record) and loading (the object streamed into one buffer, widened, written into the GPU
 * buffers), mean of `--reps` after a warm-up, for the example's policy and a SmolLM2-135M-shaped
 * random one. Explore throughput:
 * the example's GRPO cut short (`tests/cluster/addition_grpo.yaml`: 2 tasks x 4 rollouts per
 * step, `sync_offset` 1) with 1 and 2 explorer processes against one trainer; rollouts/s are the
 * rollouts of explore steps 2..N over the time between the trainer's rows 1 and N (start-up and
 * compiles left out). Process start-up and shader compiles are left out of both.
 */

import { getGpu } from "../src/gpu/device.ts";
import { shapeSize } from "../src/graph/tensor.ts";
import { parseHfConfig } from "../src/model/hf_config.ts";
import { initParameters } from "../src/model/init.ts";
import { createModel } from "../src/model/policy.ts";
import { NatsLink } from "../src/cluster/nats_link.ts";
import {
  loadWeights,
  publishWeights,
  weightBytes,
  type WeightDType,
} from "../src/cluster/weight_broadcast.ts";
import { readMetrics } from "../src/monitor/metrics_log.ts";
import { clusterRunDir, spawnRft, writeExampleTasks } from "./_cluster_processes.ts";
import { benchArgs, integerFlag } from "./_flags.ts";
import { modelShape } from "./_model_shapes.ts";
import { startNatsServer } from "./_nats_server.ts";
import { figure, writeJsonReport } from "./_report.ts";
import { formatTable } from "./_table.ts";

const SCRIPT = "bench/cluster.ts";
const EXAMPLE_MODEL_CONFIG = new URL("../examples/addition/model/config.json", import.meta.url);
const HELP = `Usage: deno run -A ${SCRIPT} [--models addition,smollm2-135m] [--reps 3]
  [--explorers 1,2 (empty: none)] [--tasks 32] [--json FILE]`;

/** One model's broadcast figures. */
interface BroadcastResult {
  model: string;
  dtype: WeightDType;
  megabytes: number;
  publishS: number;
  loadS: number;
}

/** One explorer count's throughput. */
interface ThroughputResult {
  explorers: number;
  steps: number;
  rolloutsPerS: number;
  secondsPerStep: number;
}

async function broadcast(name: string, reps: number): Promise<BroadcastResult[]> {
  const raw = name === "addition"
    ? JSON.parse(await Deno.readTextFile(EXAMPLE_MODEL_CONFIG))
    : modelShape(name);
  const gpu = await getGpu();
  const model = await createModel(raw, initParameters(parseHfConfig(raw), 1), { gpu });
  await using server = await startNatsServer();
  await using link = await NatsLink.open({
    url: server.url,
    project: "bench",
    name,
    stage: "broadcast",
    log: (line) => console.error(line),
  });
  const results: BroadcastResult[] = [];
  try {
    for (const dtype of ["f32", "bf16"] as const) {
      let publishS = 0, loadS = 0;
      for (let version = 0; version <= reps; version++) {
        const published = await publishWeights(link, model, version, version, dtype);
        const loaded = await loadWeights(link, model, version, dtype);
        if (version > 0) publishS += published, loadS += loaded;
      }
      const megabytes = weightBytes(model, dtype) / 1e6;
      results.push({
        model: name,
        dtype,
        megabytes,
        publishS: publishS / reps,
        loadS: loadS / reps,
      });
    }
  } finally {
    model.destroy();
  }
  const params = [...model.params.values()].reduce((s, v) => s + shapeSize(v.shape), 0);
  console.error(`  ${name}: ${params} parameters`);
  return results;
}

async function throughput(explorers: number, tasks: number): Promise<ThroughputResult> {
  await using server = await startNatsServer();
  const dir = await Deno.makeTempDir({ prefix: "rft_bench_cluster_" });
  try {
    const taskFile = `${dir}/tasks.jsonl`;
    await writeExampleTasks(taskFile, tasks);
    const trainer = spawnRft("train", `${dir}/trainer`, taskFile, server.url);
    const children = Array.from(
      { length: explorers },
      (_, i) => spawnRft("explore", `${dir}/e${i}`, taskFile, server.url),
    );
    for (const child of [trainer, ...children]) {
      const out = await child.output();
      if (out.code !== 0) throw new Error(new TextDecoder().decode(out.stderr));
    }
    const { rows } = await readMetrics(`${clusterRunDir(`${dir}/trainer`)}/metrics.jsonl`);
    const steps = rows.filter((r) => "actor/loss" in r);
    const first = steps[0], last = steps.at(-1)!;
    const rollouts = steps.slice(1).reduce((s, r) => s + (r["pipeline/kept"] ?? 0), 0);
    const seconds = last.time - first.time;
    return {
      explorers,
      steps: steps.length,
      rolloutsPerS: rollouts / seconds,
      secondsPerStep: seconds / (steps.length - 1),
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function main() {
  const { values } = benchArgs(SCRIPT, {
    args: Deno.args,
    options: {
      models: { type: "string", default: "addition,smollm2-135m" },
      reps: { type: "string", default: "3" },
      explorers: { type: "string", default: "1,2" },
      tasks: { type: "string", default: "32" },
      json: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(HELP);
    return;
  }
  const reps = integerFlag(SCRIPT, "reps", values.reps);
  const tasks = integerFlag(SCRIPT, "tasks", values.tasks, 6);
  const counts = values.explorers.split(",").filter((n) => n !== "")
    .map((n) => integerFlag(SCRIPT, "explorers", n));
  const broadcasts: BroadcastResult[] = [];
  for (const name of values.models.split(",")) broadcasts.push(...await broadcast(name, reps));
  console.log(`\nweight broadcast per version, mean of ${reps} after a warm-up`);
  console.log(formatTable<BroadcastResult>([
    ["model", (r) => r.model],
    ["dtype", (r) => r.dtype],
    ["MB", (r) => figure(r.megabytes)],
    ["publish s", (r) => figure(r.publishS)],
    ["load s", (r) => figure(r.loadS)],
  ], broadcasts));
  const explore: ThroughputResult[] = [];
  for (const n of counts) explore.push(await throughput(n, tasks));
  console.log(
    `\nexplore throughput of the example's GRPO (${tasks} tasks, 2 per step, 4 rollouts)`,
  );
  console.log(formatTable<ThroughputResult>([
    ["explorers", (r) => String(r.explorers)],
    ["train steps", (r) => String(r.steps)],
    ["rollouts/s", (r) => figure(r.rolloutsPerS)],
    ["s per step", (r) => figure(r.secondsPerStep)],
  ], explore));
  if (values.json) {
    await writeJsonReport(values.json, "cluster", await getGpu(), { broadcasts, explore });
  }
}

if (import.meta.main) await main();
