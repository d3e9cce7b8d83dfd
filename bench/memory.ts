/**
 * `deno run -A bench/memory.ts`: the GPU bytes a run keeps for its policy
 * (`src/trainer/memory_report.ts`: weights, gradients, AdamW moments, the explorer's copy) for
 * shapes of `_model_shapes.ts` (default SmolLM2-135M and Qwen2.5-0.5B), training all weights
 * and training a LoRA adapter on all linear layers. Computed from the shapes: nothing is
 * allocated, nothing is timed.
 */

import { getGpu } from "../src/gpu/device.ts";
import { parseHfConfig } from "../src/model/hf_config.ts";
import { ALL_LINEAR } from "../src/model/lora.ts";
import { type MemoryReport, memoryReport } from "../src/trainer/memory_report.ts";
import { benchArgs, integerFlag } from "./_flags.ts";
import { modelShape } from "./_model_shapes.ts";
import { writeJsonReport } from "./_report.ts";
import { formatTable } from "./_table.ts";

const SCRIPT = "bench/memory.ts";

const HELP = `Usage: deno run -A ${SCRIPT} [--models smollm2-135m,qwen2.5-0.5b] [--rank 8]
  [--json FILE]
--models  shapes of bench/_model_shapes.ts
--rank    LoRA rank (adapters on all linear layers, alpha = 2 x rank)`;

/** One row of the table: a model trained one way. */
interface Row extends MemoryReport {
  model: string;
  training: string;
}

async function main() {
  const { values } = benchArgs(SCRIPT, {
    args: Deno.args,
    options: {
      models: { type: "string", default: "smollm2-135m,qwen2.5-0.5b" },
      rank: { type: "string", default: "8" },
      json: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return console.log(HELP);
  const rank = integerFlag(SCRIPT, "rank", values.rank);
  const lora = { rank, alpha: 2 * rank, targetModules: [ALL_LINEAR] };
  const rows: Row[] = values.models.split(",").flatMap((model) => {
    const cfg = parseHfConfig(modelShape(model));
    return [
      { model, training: "all weights", ...memoryReport(cfg) },
      { model, training: `LoRA r=${rank} all-linear`, ...memoryReport(cfg, { lora }) },
    ];
  });
  const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
  console.log(formatTable<Row>([
    ["model", (r) => r.model],
    ["training", (r) => r.training],
    ["parameters", (r) => String(r.parameters)],
    ["trainable", (r) => String(r.trainableParameters)],
    ["weights MiB", (r) => mib(r.weightBytes)],
    ["grads MiB", (r) => mib(r.gradientBytes)],
    ["optimizer MiB", (r) => mib(r.optimizerBytes)],
    ["explorer MiB", (r) => mib(r.copyBytes)],
    ["total MiB", (r) => mib(r.totalBytes)],
  ], rows));
  console.log(
    "f32 everywhere; the explorer holds a merged copy; activations and graph buffers not counted.",
  );
  if (values.json) await writeJsonReport(values.json, "memory", await getGpu(), { rank, rows });
}

if (import.meta.main) await main();
