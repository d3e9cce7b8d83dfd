/**
 * `deno run -A bench/forward.ts`: prefill (the full forward to logits of every position) of one
 * random model on rft against the same weights exported to ONNX and run by onnxruntime-web's
 * WebGPU EP and 2-thread wasm EP, at sequence lengths 64 / 256 and batch 1 / 8; tokens/s and
 * ratios measured in the same run on the same adapter (wall clock for all three, logits left
 * where each produces them). Each cell is the best of `--rounds` interleaved measurements.
 * `--model` picks a shape of `_model_shapes.ts` (default "tiny"; "small" and "smollm2-135m" are slow on a
 * CPU adapter); `--json FILE` also writes the results. Prints, never asserts.
 */

import { parseArgs } from "node:util";
import { getGpu } from "../src/gpu/device.ts";
import { compileGraph } from "../src/graph/executable.ts";
import { Graph } from "../src/graph/graph.ts";
import type { PolicyModel } from "../src/model/policy.ts";
import { buildLogits } from "../src/model/transformer.ts";
import { compareClose } from "../src/util/compare.ts";
import { timeRuns } from "./_ort.ts";
import { exportedPolicy, type OrtPolicy } from "./_ort_policy.ts";
import { formatTable } from "./_table.ts";

const HELP = `Usage: deno run -A bench/forward.ts [--model small|tiny|smollm2-135m] [--seqs 64,256]
  [--batches 1,8] [--min-ms 1000] [--rounds 2] [--json FILE]`;

/** Prefill tokens/s of each contender at one shape. */
interface Row {
  seq: number;
  batch: number;
  rft: number;
  ortWebgpu: number;
  ortWasm: number;
}

/** Token rows [batch][seq] of deterministic ids. */
function tokenRows(batch: number, seq: number, vocab: number): number[][] {
  return Array.from(
    { length: batch },
    (_, b) => Array.from({ length: seq }, (_, t) => (7 * t + 13 * b + 1) % vocab),
  );
}

/** rft's forward of `rows` compiled once: `time(count)` gives ms per run, `logits` reads them. */
async function rftForward(model: PolicyModel, rows: number[][]) {
  const [batch, seq] = [rows.length, rows[0].length];
  const g = new Graph();
  const input = (name: string) => g.input([batch, seq], "i32", name);
  const inputs = { ids: input("ids"), positions: input("positions"), segments: input("segments") };
  const logits = buildLogits(model.config, model.weights(g), inputs);
  const exe = await compileGraph(model.gpu, [logits], `forward ${batch}x${seq}`);
  const feeds = new Map([
    [inputs.ids, Int32Array.from(rows.flat())],
    [inputs.positions, Int32Array.from({ length: batch * seq }, (_, i) => i % seq)],
    [inputs.segments, new Int32Array(batch * seq)],
  ]);
  return {
    async time(count: number): Promise<number> {
      const start = performance.now();
      for (let i = 0; i < count; i++) await exe.run(feeds);
      await model.gpu.device.queue.onSubmittedWorkDone();
      return (performance.now() - start) / count;
    },
    async logits(): Promise<Float32Array> {
      await exe.run(feeds);
      return (await exe.read([logits]))[0] as Float32Array;
    },
    destroy: () => exe.destroy(),
  };
}

/** Largest |a - b| / (1 + |b|) of both ORT EPs against rft on one batch: the same model? */
async function agreement(model: PolicyModel, ort: OrtPolicy) {
  const rows = tokenRows(2, 64, model.config.vocabSize);
  const rft = await rftForward(model, rows);
  const expected = await rft.logits();
  rft.destroy();
  const scale = 1 + expected.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
  const error = async (provider: "webgpu" | "wasm") =>
    compareClose(await ort.logits(provider, rows), expected, { atol: 0, rtol: 0 }).maxAbsError /
    scale;
  return { webgpu: await error("webgpu"), wasm: await error("wasm") };
}

async function benchShape(
  model: PolicyModel,
  ort: OrtPolicy,
  seq: number,
  batch: number,
  minMs: number,
  rounds: number,
): Promise<Row> {
  const rows = tokenRows(batch, seq, model.config.vocabSize);
  const rft = await rftForward(model, rows);
  const contenders = {
    rft: (count: number) => rft.time(count),
    ortWebgpu: (count: number) => ort.timeForward("webgpu", rows, count),
    ortWasm: (count: number) => ort.timeForward("wasm", rows, count),
  };
  const best: Record<string, number> = {};
  for (let round = 0; round < rounds; round++) {
    for (const [name, runs] of Object.entries(contenders)) {
      const tokensPerS = (batch * seq) / (await timeRuns(runs, minMs) / 1000);
      best[name] = Math.max(best[name] ?? 0, tokensPerS);
    }
  }
  rft.destroy();
  return { seq, batch, rft: best.rft, ortWebgpu: best.ortWebgpu, ortWasm: best.ortWasm };
}

async function main() {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      model: { type: "string", default: "tiny" },
      seqs: { type: "string", default: "64,256" },
      batches: { type: "string", default: "1,8" },
      "min-ms": { type: "string", default: "1000" },
      rounds: { type: "string", default: "2" },
      json: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return console.log(HELP);
  const seqs = values.seqs.split(",").map(Number);
  const batches = values.batches.split(",").map(Number);
  const minMs = Number(values["min-ms"]);
  const rounds = Number(values.rounds);
  const positive = (xs: number[]) => xs.every((x) => Number.isInteger(x) && x > 0);
  if (!positive(seqs) || !positive(batches) || !(minMs > 0) || !(rounds >= 1)) {
    throw new Error(
      `Cannot run bench/forward.ts: expected positive integer --seqs and --batches, --min-ms > 0, --rounds >= 1\n${HELP}`,
    );
  }
  const gpu = await getGpu();
  const { model, ort, parameters, onnxBytes } = await exportedPolicy(values.model, gpu);
  const fallback = gpu.summary.isFallback ? " (fallback, CPU)" : "";
  console.log(`adapter: ${gpu.summary.description}${fallback}`);
  console.log(
    `model ${values.model}: ${(parameters / 1e6).toFixed(1)}M parameters, ONNX ${
      (onnxBytes / 2 ** 20).toFixed(1)
    } MiB (opset 17, exported by src/export/)`,
  );
  const check = await agreement(model, ort);
  console.log(
    `same model: max |logit difference| / (1 + max |logit|) vs rft: webgpu ${
      check.webgpu.toExponential(1)
    }, wasm ${check.wasm.toExponential(1)}`,
  );
  const results: Row[] = [];
  for (const seq of seqs) {
    for (const batch of batches) {
      results.push(await benchShape(model, ort, seq, batch, minMs, rounds));
      console.error(`  measured seq ${seq} batch ${batch}`);
    }
  }
  const rate = (x: number) => x.toFixed(0);
  console.log(`\nprefill tokens/s (best of ${rounds}, >= ${minMs} ms each, wall clock)`);
  console.log(formatTable<Row>([
    ["seq x batch", (r) => `${r.seq} x ${r.batch}`],
    ["rft", (r) => rate(r.rft)],
    ["ort-webgpu", (r) => rate(r.ortWebgpu)],
    ["ort-wasm2t", (r) => rate(r.ortWasm)],
    ["rft/webgpu", (r) => (r.rft / r.ortWebgpu).toFixed(2)],
    ["rft/wasm", (r) => (r.rft / r.ortWasm).toFixed(2)],
  ], results));
  if (values.json) {
    const report = {
      adapter: gpu.summary,
      date: new Date().toISOString(),
      model: values.model,
      parameters,
      minMs,
      rounds,
      agreement: check,
      prefillTokensPerS: results,
    };
    await Deno.writeTextFile(values.json, JSON.stringify(report, null, 2) + "\n");
    console.log(`wrote ${values.json}`);
  }
  await ort.release();
  model.destroy();
}

if (import.meta.main) {
  await main();
  Deno.exit(0); // ORT's wasm worker threads would keep the process alive
}
