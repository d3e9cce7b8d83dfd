/**
 * `deno run -A bench/decode.ts`: greedy decode tokens/s of random models at batch 1 / 8 / 32
 * with rft's KV-cached generation engine, against what a JavaScript user would pick, on the same
 * weights exported by `src/export/`: transformers.js `model.generate` and a raw onnxruntime-node
 * loop, both on the KV-cached export (onnxruntime-node's CPU EP, default threads), and
 * onnxruntime-web without a KV cache, whose loop feeds the growing sequence back each step
 * (2-thread wasm EP at `--wasm-batches`, default all; WebGPU EP at `--webgpu-batches`, default
 * none: minutes per batch on a CPU adapter). Also counts rft's readbacks per generated token
 * (one per block of steps), its GPU dispatches per decode step and the CPU time recording them.
 * Decode tokens/s counts the tokens after each row's first (which comes from the prompt's
 * forward, reported as prefill tokens/s); the whole-call ratio puts the two together.
 * `--ort-node-webgpu` adds the raw loop on onnxruntime-node's WebGPU EP (cache and logits through
 * the host each step, as a plain `run` gives them). `--sampled` adds rft's decode rate when
 * sampling as RL rollouts do ({@link SAMPLED}: the sampler's threshold searches run; the anchors'
 * loops are greedy only). `--reps N` keeps the best of N timed runs of each contender (default 1;
 * decode rates on a shared 2-core machine swing by 1.5x between runs), the runs of rft,
 * transformers.js and onnxruntime-node taken in turn so that each ratio compares runs of the same
 * minutes. `--json FILE` writes the results. Prints, never asserts.
 */

import { type GenerateOptions, GenerationEngine } from "../src/engine/engine.ts";
import { getGpu } from "../src/gpu/device.ts";
import { exportedPolicy, type OrtPolicy, type OrtProvider, tokenRows } from "./_ort_policy.ts";
import { OrtNodePolicy } from "./_ort_node_policy.ts";
import { TransformersJsPolicy } from "./_transformers_js_policy.ts";
import { benchArgs, integerFlag } from "./_flags.ts";
import { figure, reportMeasured, writeJsonReport } from "./_report.ts";
import { formatTable } from "./_table.ts";

const SCRIPT = "bench/decode.ts";

const HELP = `Usage: deno run -A ${SCRIPT} [--models tiny,small,smollm2-135m] [--batches 1,8,32]
  [--prompt-len 16] [--tokens 32] [--webgpu-batches ""] [--wasm-batches 1,8,32]
  [--ort-node-webgpu] [--sampled] [--reps 1] [--json FILE]
--models          shapes of bench/_model_shapes.ts, random weights (default tiny)
--webgpu-batches  batches at which ORT-web's WebGPU EP runs too (minutes each on a CPU adapter)
--wasm-batches    batches at which ORT-web's wasm EP (no KV cache) runs (default: all)
--ort-node-webgpu the KV-cached loop on onnxruntime-node's WebGPU EP too (Dawn; refuses llvmpipe)
--sampled         rft's decode rate sampling at temperature 1, top-k 50, top-p 0.9 too
--reps            timed runs of each contender, the best kept (default 1)`;

/** Decode tokens/s of each contender at one batch size. */
interface Row {
  model: string;
  batch: number;
  rft: number;
  /** rft's decode rate with {@link SAMPLED} settings; undefined without `--sampled`. */
  rftSampled?: number;
  /** transformers.js and the raw onnxruntime-node loop, both KV-cached. */
  tjs: number;
  ortNode: number;
  /** The KV-cached loop on onnxruntime-node's WebGPU EP; undefined where not run. */
  ortNodeWebgpu?: number;
  /** Undefined where ORT-web's EP was not run (`--webgpu-batches`, `--wasm-batches`). */
  ortWebgpu?: number;
  ortWasm?: number;
  /** rft's readbacks during one generate call, and its decode blocks. */
  readbacks: number;
  blocks: number;
  /** rft's GPU dispatches per decode step. */
  dispatchesPerStep: number;
  /** CPU milliseconds recording one decode step's commands (see `dispatchCounter`). */
  encodeMsPerStep: number;
  /** Prompt tokens/s of the call (or step) that reads the prompt and gives the first token. */
  prefill: { rft: number; tjs: number; ortNode: number };
  /** Share of each contender's greedy tokens equal to rft's. */
  sameTokens: { tjs: number; ortNode: number; ortWasm?: number };
}

/**
 * Counts compute dispatches recorded through WebGPU (rft's and any other in the process), and the
 * CPU milliseconds spent recording command buffers (from `createCommandEncoder` to `finish`).
 */
const dispatchCounter = { count: 0, encodeMs: 0 };
const realDispatch = GPUComputePassEncoder.prototype.dispatchWorkgroups;
GPUComputePassEncoder.prototype.dispatchWorkgroups = function (x, y, z) {
  dispatchCounter.count++;
  return realDispatch.call(this, x, y, z);
};
const encoderStarts = new WeakMap<GPUCommandEncoder, number>();
const realCreateEncoder = GPUDevice.prototype.createCommandEncoder;
GPUDevice.prototype.createCommandEncoder = function (descriptor) {
  const encoder = realCreateEncoder.call(this, descriptor);
  encoderStarts.set(encoder, performance.now());
  return encoder;
};
const realFinish = GPUCommandEncoder.prototype.finish;
GPUCommandEncoder.prototype.finish = function (descriptor) {
  const buffer = realFinish.call(this, descriptor);
  dispatchCounter.encodeMs += performance.now() - (encoderStarts.get(this) ?? performance.now());
  return buffer;
};

/** Prompt tokens/s of a call that took `ms` to read `rows` and give each its first token. */
function promptRate(rows: number[][], ms: number): number {
  return (rows.length * rows[0].length) / (ms / 1000);
}

/**
 * Generated tokens/s of a whole call, reading the prompt included, from the call's prompt
 * tokens/s and decode tokens/s (all rows): tokens / (promptLen / prefill + (tokens - 1) / decode).
 */
function wholeCallRate(prefill: number, decode: number, promptLen: number, tokens: number) {
  return tokens / (promptLen / prefill + (tokens - 1) / decode);
}

/**
 * The prompt tokens/s rft's prefill would need for half ORT-node's whole-call rate at rft's
 * measured decode rate: promptLen / (2 * ortCallTime - (tokens - 1) / rftDecode), where a call's
 * time per row is promptLen / prefill + (tokens - 1) / decode; Infinity when rft's decode alone
 * takes longer than that budget.
 */
function prefillForHalfWholeCall(r: Row, promptLen: number, tokens: number): number {
  const budget = 2 * tokens / wholeCallRate(r.prefill.ortNode, r.ortNode, promptLen, tokens);
  const left = budget - (tokens - 1) / r.rft;
  return left > 0 ? promptLen / left : Infinity;
}

/** Greedy decoding, what every contender runs. */
const GREEDY: GenerateOptions = { temperature: 0, stop: [] };

/** Sampling as RL rollouts do (`--sampled`, rft only), seeded. */
const SAMPLED: GenerateOptions = { temperature: 1, topK: 50, topP: 0.9, seed: 1, stop: [] };

/**
 * rft's generation of `tokens` per prompt (greedy unless `settings` say otherwise); decode
 * tokens/s, readbacks and the tokens.
 */
async function rftDecode(
  engine: GenerationEngine,
  rows: number[][],
  tokens: number,
  settings = GREEDY,
) {
  const run = async (maxTokens: number) => {
    const start = performance.now();
    const [dispatches, steps] = [dispatchCounter.count, engine.stats.decodeSteps];
    const encodeMs = dispatchCounter.encodeMs;
    const samples = await engine.generate(rows, { ...settings, maxTokens });
    return {
      ms: performance.now() - start,
      samples,
      dispatches: dispatchCounter.count - dispatches,
      encodeMs: dispatchCounter.encodeMs - encodeMs,
      steps: engine.stats.decodeSteps - steps,
    };
  };
  await run(1); // warm-up: compiles the prefill and decode graphs of both cache sizes
  await run(tokens);
  const prefill = await run(1);
  const readbacksBefore = engine.stats.readbacks;
  const full = await run(tokens);
  return {
    tokensPerS: (rows.length * (tokens - 1)) / ((full.ms - prefill.ms) / 1000),
    promptTokensPerS: promptRate(rows, prefill.ms),
    readbacks: engine.stats.readbacks - readbacksBefore,
    dispatchesPerStep: (full.dispatches - prefill.dispatches) / (full.steps - prefill.steps),
    encodeMsPerStep: (full.encodeMs - prefill.encodeMs) / (full.steps - prefill.steps),
    tokens: full.samples.map((s) => s.tokens),
  };
}

/** ORT-web's greedy loop without KV cache (warmed up on one step); tokens/s and the tokens. */
async function ortDecode(ort: OrtPolicy, provider: OrtProvider, rows: number[][], tokens: number) {
  await ort.greedy(provider, rows, 1);
  const run = await ort.greedy(provider, rows, tokens);
  return {
    tokensPerS: (rows.length * (tokens - 1)) / (run.laterStepsMs / 1000),
    tokens: run.tokens,
  };
}

/** onnxruntime-node's KV-cached loop (warmed up on two steps); tokens/s and the tokens. */
async function ortNodeDecode(ort: OrtNodePolicy, rows: number[][], tokens: number) {
  await ort.greedy(rows, 2);
  const run = await ort.greedy(rows, tokens);
  return {
    tokensPerS: (rows.length * (tokens - 1)) / (run.laterStepsMs / 1000),
    promptTokensPerS: promptRate(rows, run.firstStepMs),
    tokens: run.tokens,
  };
}

/** transformers.js generate, timed as rft's: a full call less a one-token call. */
async function tjsDecode(tjs: TransformersJsPolicy, rows: number[][], tokens: number) {
  await tjs.greedy(rows, 2); // warm-up
  const prefill = await tjs.greedy(rows, 1);
  const full = await tjs.greedy(rows, tokens);
  return {
    tokensPerS: (rows.length * (tokens - 1)) / ((full.ms - prefill.ms) / 1000),
    promptTokensPerS: promptRate(rows, prefill.ms),
    tokens: full.tokens,
  };
}

/** The best of `reps` (>= 1) runs of `measure`. */
async function bestOf<T extends { tokensPerS: number }>(
  reps: number,
  measure: () => Promise<T>,
): Promise<T> {
  return (await interleavedBest(reps, { measure })).measure;
}

/**
 * The best of `reps` (>= 1) runs of each of `measures`, taken in turn (rft, tjs, node, rft, ...)
 * so that the contenders meet the same stretches of a shared machine's drifting speed: run as
 * blocks of `reps` each, their best runs came minutes apart.
 */
async function interleavedBest<M extends Record<string, () => Promise<{ tokensPerS: number }>>>(
  reps: number,
  measures: M,
): Promise<{ [K in keyof M]: Awaited<ReturnType<M[K]>> }> {
  const best: Partial<Record<keyof M, { tokensPerS: number }>> = {};
  for (let i = 0; i < reps; i++) {
    for (const name of Object.keys(measures) as (keyof M)[]) {
      const next = await measures[name]();
      const old = best[name];
      best[name] = old && old.tokensPerS >= next.tokensPerS ? old : next;
    }
  }
  return best as { [K in keyof M]: Awaited<ReturnType<M[K]>> };
}

/** The share of equal tokens at equal places in two lists of rows. */
function agreement(a: number[][], b: number[][]): number {
  const pairs = a.flatMap((row, r) => row.map((t, i) => t === b[r][i]));
  return pairs.filter(Boolean).length / pairs.length;
}

async function main() {
  const { values } = benchArgs(SCRIPT, {
    args: Deno.args,
    options: {
      models: { type: "string", default: "tiny" },
      batches: { type: "string", default: "1,8,32" },
      "prompt-len": { type: "string", default: "16" },
      tokens: { type: "string", default: "32" },
      "webgpu-batches": { type: "string", default: "" },
      "wasm-batches": { type: "string" },
      "ort-node-webgpu": { type: "boolean" },
      sampled: { type: "boolean" },
      reps: { type: "string", default: "1" },
      json: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return console.log(HELP);
  const list = (flag: "batches" | "webgpu-batches" | "wasm-batches") => {
    const text = values[flag] ?? values.batches;
    return text === "" ? [] : text.split(",").map((t) => integerFlag(SCRIPT, flag, t));
  };
  const [batches, webgpuBatches] = [list("batches"), list("webgpu-batches")];
  const wasmBatches = list("wasm-batches");
  const promptLen = integerFlag(SCRIPT, "prompt-len", values["prompt-len"]);
  const reps = integerFlag(SCRIPT, "reps", values.reps);
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
    const { model, ort, raw, cfg, params, parameters } = await exportedPolicy(name, gpu);
    const ortNode = await OrtNodePolicy.create(cfg, params);
    const nodeWebgpu = await OrtNodePolicy.webgpuIfWanted(values["ort-node-webgpu"], cfg, params);
    const tjs = await TransformersJsPolicy.create(raw, cfg, params);
    const engine = new GenerationEngine(model);
    blockSize = engine.blockSize;
    models.push({ model: name, parameters });
    for (const batch of batches) {
      const rows = tokenRows(batch, promptLen, model.config.vocabSize);
      const { rft, tjs: tjsRun, node } = await interleavedBest(reps, {
        rft: () => rftDecode(engine, rows, tokens),
        tjs: () => tjsDecode(tjs, rows, tokens),
        node: () => ortNodeDecode(ortNode, rows, tokens),
      });
      const sampled = values.sampled
        ? await bestOf(reps, () => rftDecode(engine, rows, tokens, SAMPLED))
        : undefined;
      const nodeGpu = nodeWebgpu &&
        await bestOf(reps, () => ortNodeDecode(nodeWebgpu, rows, tokens));
      const wasm = wasmBatches.includes(batch)
        ? await bestOf(reps, () => ortDecode(ort, "wasm", rows, tokens))
        : undefined;
      const webgpu = webgpuBatches.includes(batch)
        ? await bestOf(reps, () => ortDecode(ort, "webgpu", rows, tokens))
        : undefined;
      results.push({
        model: name,
        batch,
        rft: rft.tokensPerS,
        rftSampled: sampled?.tokensPerS,
        tjs: tjsRun.tokensPerS,
        ortNode: node.tokensPerS,
        ortNodeWebgpu: nodeGpu?.tokensPerS,
        ortWebgpu: webgpu?.tokensPerS,
        ortWasm: wasm?.tokensPerS,
        readbacks: rft.readbacks,
        blocks: Math.ceil(tokens / engine.blockSize),
        dispatchesPerStep: rft.dispatchesPerStep,
        encodeMsPerStep: rft.encodeMsPerStep,
        prefill: {
          rft: rft.promptTokensPerS,
          tjs: tjsRun.promptTokensPerS,
          ortNode: node.promptTokensPerS,
        },
        sameTokens: {
          tjs: agreement(tjsRun.tokens, rft.tokens),
          ortNode: agreement(node.tokens, rft.tokens),
          ortWasm: wasm && agreement(wasm.tokens, rft.tokens),
        },
      });
      reportMeasured(`${name} batch ${batch}`, results[results.length - 1]);
    }
    engine.destroy();
    await tjs.release();
    await ortNode.release();
    await nodeWebgpu?.release();
    await ort.release();
    model.destroy();
  }
  const maybe = (x?: number) => (x === undefined ? "-" : figure(x));
  const same = (r: Row) =>
    [r.sameTokens.tjs, r.sameTokens.ortNode, r.sameTokens.ortWasm]
      .map((x) => (x === undefined ? "-" : x.toFixed(2))).join(" / ");
  console.log(
    `\ndecode tokens/s (greedy; ort-wasm has no KV cache: each step reruns the sequence)`,
  );
  console.log(formatTable<Row>([
    ["model", (r) => r.model],
    ["batch", (r) => String(r.batch)],
    ["rft (KV cache)", (r) => figure(r.rft)],
    ["rft sampled", (r) => maybe(r.rftSampled)],
    ["transformers.js", (r) => figure(r.tjs)],
    ["ort-node KV", (r) => figure(r.ortNode)],
    ["ort-node-webgpu KV", (r) => maybe(r.ortNodeWebgpu)],
    ["ort-wasm2t", (r) => maybe(r.ortWasm)],
    ["ort-webgpu", (r) => maybe(r.ortWebgpu)],
    ["rft/tjs", (r) => figure(r.rft / r.tjs)],
    ["rft/ort-node", (r) => figure(r.rft / r.ortNode)],
    [
      "whole call rft/ort-node",
      (r) =>
        figure(
          wholeCallRate(r.prefill.rft, r.rft, promptLen, tokens) /
            wholeCallRate(r.prefill.ortNode, r.ortNode, promptLen, tokens),
        ),
    ],
    [
      "rft prefill for 0.5x whole call",
      (r) => {
        const needed = prefillForHalfWholeCall(r, promptLen, tokens);
        return Number.isFinite(needed) ? figure(needed) : "unreachable";
      },
    ],
    ["rft/node-webgpu", (r) => maybe(r.ortNodeWebgpu && r.rft / r.ortNodeWebgpu)],
    ["rft/wasm", (r) => maybe(r.ortWasm && r.rft / r.ortWasm)],
    [
      "prefill rft / tjs / ort-node",
      (r) => [r.prefill.rft, r.prefill.tjs, r.prefill.ortNode].map(figure).join(" / "),
    ],
    ["rft dispatches/step", (r) => figure(r.dispatchesPerStep)],
    ["rft encode ms/step", (r) => figure(r.encodeMsPerStep)],
    ["rft readbacks/token", (r) => (r.readbacks / tokens).toFixed(4)],
    ["same tokens tjs / node / wasm", same],
  ], results));
  console.log(
    `rft: ${blockSize} decode steps per block, one readback per block; readbacks/token counts` +
      ` a row's ${tokens} tokens (all rows share each readback). prefill: prompt tokens/s of` +
      ` the call (ort-node: the step) that reads the prompt. whole call: generated tokens/s of` +
      ` a call, prompt reading included, from its prefill and decode rates; rft prefill for 0.5x` +
      ` whole call: the prompt tokens/s rft's prefill would need for that at its decode rate.` +
      ` transformers.js and ort-node:` +
      ` onnxruntime-node's CPU EP on the KV-cached export. same tokens: each one's greedy` +
      ` tokens equal to rft's (random weights have near-ties). ort-webgpu, ort-wasm2t "-": not` +
      ` run at that batch (--webgpu-batches, --wasm-batches). rft sampled: temperature 1,` +
      ` top-k 50, top-p 0.9 (--sampled; "-" without).`,
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
