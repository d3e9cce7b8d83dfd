/**
 * `deno run -A bench/decode.ts`: greedy decode tokens/s of random models at batch 1 / 8 / 32
 * with rft's KV-cached generation engine, against onnxruntime-web (2-thread wasm EP, and the
 * WebGPU EP at `--webgpu-batches`, default 1 and 8: batch 32 takes minutes on a CPU adapter) on
 * the same weights exported to ONNX. The export has no KV cache, so ORT's loop feeds the growing
 * sequence back each step, reads the logits and takes the argmax of the last position: the usual
 * loop over such an export, not an equal algorithm. Also counts rft's readbacks per generated
 * token (the engine reads back once per block of steps). Decode tokens/s counts the tokens after
 * each row's first (which comes from the prompt's forward). `--json FILE` writes the results.
 * Prints, never asserts.
 */

import { parseArgs } from "node:util";
import { GenerationEngine } from "../src/engine/engine.ts";
import { getGpu } from "../src/gpu/device.ts";
import { exportedPolicy, type OrtPolicy, type OrtProvider, tokenRows } from "./_ort_policy.ts";
import { integerFlag } from "./_flags.ts";
import { figure, writeJsonReport } from "./_report.ts";
import { formatTable } from "./_table.ts";

const SCRIPT = "bench/decode.ts";

const HELP = `Usage: deno run -A ${SCRIPT} [--models tiny,small,smollm2-135m] [--batches 1,8,32]
  [--prompt-len 16] [--tokens 32] [--webgpu-batches 1,8] [--json FILE]
--models          shapes of bench/_model_shapes.ts, random weights (default tiny)
--webgpu-batches  batches at which ORT's WebGPU EP runs too (minutes each on a CPU adapter)`;

/** Decode tokens/s of each contender at one batch size. */
interface Row {
  model: string;
  batch: number;
  rft: number;
  /** Undefined where the WebGPU EP was not run (minutes per batch on a CPU adapter). */
  ortWebgpu?: number;
  ortWasm: number;
  /** rft's readbacks during one generate call, and its decode blocks. */
  readbacks: number;
  blocks: number;
  /** Share of ORT's greedy tokens (wasm EP) equal to rft's. */
  sameTokens: number;
}

/** rft greedy generation of `tokens` per prompt; decode tokens/s, readbacks and the tokens. */
async function rftDecode(engine: GenerationEngine, rows: number[][], tokens: number) {
  const greedy = { temperature: 0, stop: [] };
  const run = async (maxTokens: number) => {
    const start = performance.now();
    const samples = await engine.generate(rows, { ...greedy, maxTokens });
    return { ms: performance.now() - start, samples };
  };
  await run(1); // warm-up: compiles the prefill and decode graphs of both cache sizes
  await run(tokens);
  const prefill = await run(1);
  const readbacksBefore = engine.stats.readbacks;
  const full = await run(tokens);
  return {
    tokensPerS: (rows.length * (tokens - 1)) / ((full.ms - prefill.ms) / 1000),
    readbacks: engine.stats.readbacks - readbacksBefore,
    tokens: full.samples.map((s) => s.tokens),
  };
}

/** ORT's greedy loop (warmed up on one step); decode tokens/s and the tokens. */
async function ortDecode(ort: OrtPolicy, provider: OrtProvider, rows: number[][], tokens: number) {
  await ort.greedy(provider, rows, 1);
  const run = await ort.greedy(provider, rows, tokens);
  return {
    tokensPerS: (rows.length * (tokens - 1)) / (run.laterStepsMs / 1000),
    tokens: run.tokens,
  };
}

/** The share of equal tokens at equal places in two lists of rows. */
function agreement(a: number[][], b: number[][]): number {
  const pairs = a.flatMap((row, r) => row.map((t, i) => t === b[r][i]));
  return pairs.filter(Boolean).length / pairs.length;
}

async function main() {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      models: { type: "string", default: "tiny" },
      batches: { type: "string", default: "1,8,32" },
      "prompt-len": { type: "string", default: "16" },
      tokens: { type: "string", default: "32" },
      "webgpu-batches": { type: "string", default: "1,8" },
      json: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return console.log(HELP);
  const list = (flag: "batches" | "webgpu-batches") =>
    values[flag] === "" ? [] : values[flag].split(",").map((t) => integerFlag(SCRIPT, flag, t));
  const [batches, webgpuBatches] = [list("batches"), list("webgpu-batches")];
  const promptLen = integerFlag(SCRIPT, "prompt-len", values["prompt-len"]);
  const tokens = integerFlag(SCRIPT, "tokens", values.tokens, 2);
  const gpu = await getGpu();
  console.log(
    `adapter: ${gpu.summary.description}${gpu.summary.isFallback ? " (fallback, CPU)" : ""}`,
  );
  console.log(`prompt ${promptLen} tokens, ${tokens} generated per row (greedy)`);
  const models = [];
  const results: Row[] = [];
  let blockSize = 0;
  for (const name of values.models.split(",")) {
    const { model, ort, parameters } = await exportedPolicy(name, gpu);
    const engine = new GenerationEngine(model);
    blockSize = engine.blockSize;
    models.push({ model: name, parameters });
    for (const batch of batches) {
      const rows = tokenRows(batch, promptLen, model.config.vocabSize);
      const rft = await rftDecode(engine, rows, tokens);
      const wasm = await ortDecode(ort, "wasm", rows, tokens);
      const webgpu = webgpuBatches.includes(batch)
        ? await ortDecode(ort, "webgpu", rows, tokens)
        : undefined;
      results.push({
        model: name,
        batch,
        rft: rft.tokensPerS,
        ortWebgpu: webgpu?.tokensPerS,
        ortWasm: wasm.tokensPerS,
        readbacks: rft.readbacks,
        blocks: Math.ceil(tokens / engine.blockSize),
        sameTokens: agreement(wasm.tokens, rft.tokens),
      });
      console.error(`  measured ${name} batch ${batch}`);
    }
    engine.destroy();
    await ort.release();
    model.destroy();
  }
  const maybe = (x?: number) => (x === undefined ? "-" : figure(x));
  console.log(`\ndecode tokens/s (greedy; ORT without KV cache: each step reruns the sequence)`);
  console.log(formatTable<Row>([
    ["model", (r) => r.model],
    ["batch", (r) => String(r.batch)],
    ["rft (KV cache)", (r) => figure(r.rft)],
    ["ort-webgpu", (r) => maybe(r.ortWebgpu)],
    ["ort-wasm2t", (r) => figure(r.ortWasm)],
    ["rft/webgpu", (r) => maybe(r.ortWebgpu && r.rft / r.ortWebgpu)],
    ["rft/wasm", (r) => figure(r.rft / r.ortWasm)],
    ["rft readbacks/token", (r) => (r.readbacks / tokens).toFixed(4)],
    ["readbacks/block", (r) => (r.readbacks / r.blocks).toFixed(2)],
    ["same tokens", (r) => r.sameTokens.toFixed(3)],
  ], results));
  console.log(
    `rft: ${blockSize} decode steps per block, one readback per block; readbacks/token counts` +
      ` a row's ${tokens} tokens (all rows share each readback). same tokens: ORT wasm's greedy` +
      ` tokens equal to rft's (random weights have near-ties). ort-webgpu "-": not run at that` +
      ` batch (--webgpu-batches).`,
  );
  if (values.json) {
    await writeJsonReport(values.json, "decode", gpu, {
      promptLen,
      tokens,
      blockSize,
      models,
      decode: results,
    });
  }
}

if (import.meta.main) {
  await main();
  Deno.exit(0); // ORT's wasm worker threads would keep the process alive
}
