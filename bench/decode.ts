/**
 * `deno run -A bench/decode.ts`: greedy decode tokens/s of one random model at batch 1 / 8 / 32
 * with rft's KV-cached generation engine, against onnxruntime-web (WebGPU EP and 2-thread wasm
 * EP) on the same weights exported to ONNX. The export has no KV cache, so ORT's loop feeds the
 * growing sequence back each step, reads the logits and takes the argmax of the last position:
 * the usual loop over such an export, not an equal algorithm. Also counts rft's readbacks per
 * generated token (the engine reads back once per block of steps). Decode tokens/s counts the
 * tokens after each row's first (which comes from the prompt's forward). `--json FILE` writes
 * the results. Prints, never asserts.
 */

import { parseArgs } from "node:util";
import { GenerationEngine } from "../src/engine/engine.ts";
import { getGpu } from "../src/gpu/device.ts";
import { exportedPolicy, type OrtPolicy, type OrtProvider } from "./_ort_policy.ts";
import { formatTable } from "./_table.ts";

const HELP =
  `Usage: deno run -A bench/decode.ts [--model small|tiny|smollm2-135m] [--batches 1,8,32]
  [--prompt-len 16] [--tokens 32] [--ort-batches 1,8,32] [--json FILE]`;

/** Decode tokens/s of each contender at one batch size (undefined: ORT not run there). */
interface Row {
  batch: number;
  rft: number;
  ortWebgpu?: number;
  ortWasm?: number;
  /** rft's readbacks during one generate call, and its decode blocks. */
  readbacks: number;
  blocks: number;
  /** Share of ORT's greedy tokens (wasm EP) equal to rft's. */
  sameTokens?: number;
}

/** Prompts [batch][promptLen] of deterministic ids. */
function prompts(batch: number, promptLen: number, vocab: number): number[][] {
  return Array.from(
    { length: batch },
    (_, b) => Array.from({ length: promptLen }, (_, t) => (5 * t + 11 * b + 3) % vocab),
  );
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
      model: { type: "string", default: "small" },
      batches: { type: "string", default: "1,8,32" },
      "prompt-len": { type: "string", default: "16" },
      tokens: { type: "string", default: "32" },
      "ort-batches": { type: "string", default: "1,8,32" },
      json: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return console.log(HELP);
  const list = (text: string) => (text === "" ? [] : text.split(",").map(Number));
  const batches = list(values.batches);
  const ortBatches = list(values["ort-batches"]);
  const promptLen = Number(values["prompt-len"]);
  const tokens = Number(values.tokens);
  const positive = (xs: number[]) => xs.every((x) => Number.isInteger(x) && x > 0);
  if (
    !positive([...batches, ...ortBatches, promptLen]) || !(Number.isInteger(tokens) && tokens >= 2)
  ) {
    throw new Error(
      `Cannot run bench/decode.ts: expected positive integer --batches, --ort-batches and --prompt-len, --tokens >= 2\n${HELP}`,
    );
  }
  const gpu = await getGpu();
  const { model, ort, parameters } = await exportedPolicy(values.model, gpu);
  const engine = new GenerationEngine(model);
  const fallback = gpu.summary.isFallback ? " (fallback, CPU)" : "";
  console.log(`adapter: ${gpu.summary.description}${fallback}`);
  console.log(
    `model ${values.model}: ${
      (parameters / 1e6).toFixed(1)
    }M parameters; prompt ${promptLen} tokens, ${tokens} generated per row (greedy)`,
  );
  const vocab = model.config.vocabSize;
  const results: Row[] = [];
  for (const batch of batches) {
    const rows = prompts(batch, promptLen, vocab);
    const rft = await rftDecode(engine, rows, tokens);
    const row: Row = {
      batch,
      rft: rft.tokensPerS,
      readbacks: rft.readbacks,
      blocks: Math.ceil(tokens / engine.blockSize),
    };
    if (ortBatches.includes(batch)) {
      const wasm = await ortDecode(ort, "wasm", rows, tokens);
      row.ortWasm = wasm.tokensPerS;
      row.sameTokens = agreement(wasm.tokens, rft.tokens);
      row.ortWebgpu = (await ortDecode(ort, "webgpu", rows, tokens)).tokensPerS;
    }
    results.push(row);
    console.error(`  measured batch ${batch}`);
  }
  const rate = (x?: number) => (x === undefined ? "-" : x.toFixed(1));
  const ratio = (a: number, b?: number) => (b === undefined ? "-" : (a / b).toFixed(2));
  console.log(`\ndecode tokens/s (greedy; ORT without KV cache: each step reruns the sequence)`);
  console.log(formatTable<Row>([
    ["batch", (r) => String(r.batch)],
    ["rft (KV cache)", (r) => rate(r.rft)],
    ["ort-webgpu", (r) => rate(r.ortWebgpu)],
    ["ort-wasm2t", (r) => rate(r.ortWasm)],
    ["rft/webgpu", (r) => ratio(r.rft, r.ortWebgpu)],
    ["rft/wasm", (r) => ratio(r.rft, r.ortWasm)],
    ["rft readbacks/token", (r) => (r.readbacks / tokens).toFixed(4)],
    ["readbacks/block", (r) => (r.readbacks / r.blocks).toFixed(2)],
    ["same tokens", (r) => (r.sameTokens === undefined ? "-" : r.sameTokens.toFixed(3))],
  ], results));
  console.log(
    `rft: ${engine.blockSize} decode steps per block, one readback per block; readbacks/token` +
      ` counts a row's ${tokens} tokens (all rows share each readback). same tokens: ORT wasm's` +
      ` greedy tokens equal to rft's (random weights have near-ties).`,
  );
  if (values.json) {
    const report = {
      adapter: gpu.summary,
      date: new Date().toISOString(),
      model: values.model,
      parameters,
      promptLen,
      tokens,
      blockSize: engine.blockSize,
      decode: results,
    };
    await Deno.writeTextFile(values.json, JSON.stringify(report, null, 2) + "\n");
    console.log(`wrote ${values.json}`);
  }
  engine.destroy();
  await ort.release();
  model.destroy();
}

if (import.meta.main) {
  await main();
  Deno.exit(0); // ORT's wasm worker threads would keep the process alive
}
