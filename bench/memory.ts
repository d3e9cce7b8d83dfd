/**
 * `deno run -A bench/memory.ts`: bytes per parameter by component against the 16-byte floor of
 * full-parameter training in f32 with AdamW (weights, gradients, two moments). The planned table
 * comes from the shapes (`src/trainer/memory_report.ts`: the trainer's f32 weights, gradients and
 * moments, the explorer's and the KL reference's copies in bf16 as a Hub checkpoint gives them;
 * with LoRA a bf16 base, the adapter trained); nothing is allocated. With `--measured`, the
 * peak resident memory of real-size runs (`bench/real_size.ts --json`) and what each run's own
 * memory report named after its last step, per parameter.
 */

import { getGpu } from "../src/gpu/device.ts";
import { parseHfConfig } from "../src/model/hf_config.ts";
import { ALL_LINEAR } from "../src/model/lora.ts";
import { type MemoryReport, memoryReport } from "../src/trainer/memory_report.ts";
import { benchArgs, integerFlag } from "./_flags.ts";
import { modelShape } from "./_model_shapes.ts";
import { figure, writeJsonReport } from "./_report.ts";
import { formatTable } from "./_table.ts";

const SCRIPT = "bench/memory.ts";

const HELP = `Usage: deno run -A ${SCRIPT} [--models qwen2.5-0.5b,qwen2.5-1.5b] [--rank 16]
  [--measured FILE,...] [--json FILE]
--models    shapes of bench/_model_shapes.ts
--rank      LoRA rank (adapters on all linear layers, alpha = 2 x rank)
--measured  reports of bench/real_size.ts --json: peak and measured parts per parameter`;

/** One planned row: a model trained one way. */
interface Row extends MemoryReport {
  model: string;
  training: string;
}

/** What bench/real_size.ts --json wrote (the fields read here). */
interface RealSizeReport {
  results: {
    model: string;
    parameters: number;
    sets: string[];
    peakResidentKb: number;
    steps: { memory: Record<string, number> }[];
  };
}

/** The measured parts shown, by the run's memory report names (`memory/<part>_gb`). */
const MEASURED_PARTS = [
  ["trainer weights", ["trainer_weights"]],
  ["optimizer", ["optimizer_moments"]],
  ["graphs", ["graph_buffers", "free_pooled_buffers"]],
  ["explorer", ["explorer_weights"]],
  ["reference", ["reference_weights"]],
  ["textures", ["weight_textures", "operand_textures"]],
  ["other GPU", ["other_buffers"]],
  ["JS", ["js_heap", "array_buffers"]],
  ["runtime", ["runtime"]],
] as const;

/** The planned rows of `models` (full-parameter and LoRA rank `rank`). */
function plannedRows(models: readonly string[], rank: number): Row[] {
  const lora = { rank, alpha: 2 * rank, targetModules: [ALL_LINEAR] };
  return models.flatMap((model) => {
    const cfg = parseHfConfig(modelShape(model));
    const copies = { explorer: "bf16", frozenDtype: "bf16" } as const;
    return [
      { model, training: "all weights", ...memoryReport(cfg, { ...copies, reference: true }) },
      { model, training: `LoRA r=${rank} all-linear`, ...memoryReport(cfg, { ...copies, lora }) },
    ];
  });
}

/** Prints the planned table: bytes per model parameter by component. */
function printPlanned(rows: readonly Row[]): void {
  const perParameter = (bytes: (r: Row) => number) => (r: Row) => figure(bytes(r) / r.parameters);
  console.log(formatTable<Row>([
    ["model", (r) => r.model],
    ["training", (r) => r.training],
    ["parameters", (r) => String(r.parameters)],
    ["trainable", (r) => String(r.trainableParameters)],
    ["weights B/p", perParameter((r) => r.weightBytes)],
    ["grads B/p", perParameter((r) => r.gradientBytes)],
    ["moments B/p", perParameter((r) => r.optimizerBytes)],
    ["explorer B/p", perParameter((r) => r.explorerBytes)],
    ["reference B/p", perParameter((r) => r.referenceBytes)],
    ["total B/p", perParameter((r) => r.totalBytes)],
    ["floor B/p", perParameter((r) => r.floorBytes)],
    ["total GiB", (r) => figure(r.totalBytes / 2 ** 30)],
  ], rows));
  console.log(
    "Planned: f32 trainer weights, gradients and AdamW moments; explorer and KL reference in " +
      "bf16 (a LoRA run's explorer is its adapter, its reference the base); floor: 16 bytes per " +
      "trained parameter (+ a LoRA base). Activations, textures and the runtime come on top.",
  );
}

/** Prints the measured table of real-size reports at `files`. */
async function printMeasured(files: readonly string[]): Promise<void> {
  const reports = await Promise.all(
    files.map(async (f) => JSON.parse(await Deno.readTextFile(f)) as RealSizeReport),
  );
  type Measured = RealSizeReport["results"] & { memory: Record<string, number> };
  const rows: Measured[] = reports.map((r) => ({
    ...r.results,
    memory: r.results.steps.at(-1)?.memory ?? {},
  }));
  const perParameter = (r: Measured, gib: number) => figure(gib * 2 ** 30 / r.parameters);
  console.log(formatTable<Measured>([
    ["model", (r) => r.model],
    ["training", (r) => r.sets.some((s) => s.includes("lora_configs")) ? "LoRA" : "all weights"],
    ["peak GiB", (r) => figure(r.peakResidentKb / 2 ** 20)],
    ["peak B/p", (r) => perParameter(r, r.peakResidentKb / 2 ** 20)],
    ...MEASURED_PARTS.map(([label, keys]): [string, (r: Measured) => string] => [
      `${label} B/p`,
      (r) => perParameter(r, keys.reduce((n, k) => n + (r.memory[k] ?? 0), 0)),
    ]),
  ], rows));
  console.log(
    "Measured: peak resident memory of the whole run (/usr/bin/time -v); the parts are the " +
      "run's memory report after its last train step (GPU memory is host memory on a CPU adapter).",
  );
}

async function main() {
  const { values } = benchArgs(SCRIPT, {
    args: Deno.args,
    options: {
      models: { type: "string", default: "qwen2.5-0.5b,qwen2.5-1.5b" },
      rank: { type: "string", default: "16" },
      measured: { type: "string" },
      json: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return console.log(HELP);
  const rank = integerFlag(SCRIPT, "rank", values.rank);
  const rows = plannedRows(values.models.split(","), rank);
  printPlanned(rows);
  const measured = values.measured?.split(",") ?? [];
  if (measured.length) await printMeasured(measured);
  if (values.json) await writeJsonReport(values.json, "memory", await getGpu(), { rank, rows });
}

if (import.meta.main) await main();
