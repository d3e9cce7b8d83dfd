/**
 * `deno run -A bench/forward.ts`: prefill (the full forward to logits of every position) of
 * random models on rft against the same weights exported to ONNX and run by onnxruntime-web's
 * WebGPU EP and 2-thread wasm EP and by onnxruntime-node's CPU EP (native, default threads), at
 * sequence lengths 64 / 256 and batch 1 / 8; tokens/s and ratios measured in the same run on the
 * same adapter (wall clock for all four, logits left where each produces them), and with
 * `--ort-node-webgpu` by onnxruntime-node's WebGPU EP too (logits read to the host). Each cell is
 * the best of `--rounds` interleaved measurements.
 * `--models` picks shapes of `_model_shapes.ts` (default tiny; small and smollm2-135m are slow
 * on a CPU adapter); `--json FILE` also writes the results. Prints, never asserts.
 */

import { getGpu } from "../src/gpu/device.ts";
import { compileGraph } from "../src/graph/executable.ts";
import { Graph } from "../src/graph/graph.ts";
import type { PolicyModel } from "../src/model/policy.ts";
import { buildLogits } from "../src/model/transformer.ts";
import { compareClose } from "../src/util/compare.ts";
import { benchArgs, integerFlag } from "./_flags.ts";
import { timeRuns } from "./_ort.ts";
import { exportedPolicy, type OrtPolicy, tokenRows } from "./_ort_policy.ts";
import { OrtNodePolicy } from "./_ort_node_policy.ts";
import { figure, reportMeasured, writeJsonReport } from "./_report.ts";
import { formatTable } from "./_table.ts";

const SCRIPT = "bench/forward.ts";

const HELP = `Usage: deno run -A ${SCRIPT} [--models tiny,small,smollm2-135m] [--seqs 64,256]
  [--batches 1,8] [--webgpu-batches 1,8] [--ort-node-webgpu] [--min-ms 1000] [--rounds 2]
  [--json FILE]
--models  shapes of bench/_model_shapes.ts, random weights (default tiny: a few minutes on a
          CPU adapter, where small and smollm2-135m take much longer)
--webgpu-batches  batches at which ORT-web's WebGPU EP runs too (default: all; "" for none,
          as on a CPU adapter it takes minutes per 135M-model batch)
--ort-node-webgpu  onnxruntime-node's WebGPU EP too (Dawn; it refuses llvmpipe)`;

/** Prefill tokens/s of each contender at one shape. */
interface Row {
  model: string;
  seq: number;
  batch: number;
  rft: number;
  /** Undefined where ORT-web's WebGPU EP was not run (`--webgpu-batches`). */
  ortWebgpu?: number;
  ortWasm: number;
  ortNode: number;
  /** Undefined where onnxruntime-node's WebGPU EP was not run (`--ort-node-webgpu`). */
  ortNodeWebgpu?: number;
}

/** rft's forward of `rows` compiled once, as one graph per group of rows. */
async function rftForwardGroup(model: PolicyModel, rows: number[][]) {
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
    run: () => exe.run(feeds),
    read: async () => (await exe.read([logits]))[0] as Float32Array,
    destroy: () => exe.destroy(),
  };
}

/**
 * rft's forward of `rows`: `time(count)` gives ms per run, `logits` reads them. Cut into groups
 * of rows whose logits fit one storage binding, run one after the other (as `logprobs` does).
 */
async function rftForward(model: PolicyModel, rows: number[][]) {
  // The whole logits are read back here: rows whose logits fit one storage binding per run.
  const bindingBytes = model.gpu.device.limits.maxStorageBufferBindingSize;
  const logitsTokens = Math.floor(bindingBytes / (4 * model.config.vocabSize));
  const perRun = Math.max(1, Math.floor(logitsTokens / rows[0].length));
  const groups: Awaited<ReturnType<typeof rftForwardGroup>>[] = [];
  for (let first = 0; first < rows.length; first += perRun) {
    groups.push(await rftForwardGroup(model, rows.slice(first, first + perRun)));
  }
  return {
    async time(count: number): Promise<number> {
      const start = performance.now();
      for (let i = 0; i < count; i++) for (const group of groups) await group.run();
      await model.gpu.device.queue.onSubmittedWorkDone();
      return (performance.now() - start) / count;
    },
    async logits(): Promise<Float32Array> {
      const parts = [];
      for (const group of groups) {
        await group.run();
        parts.push(await group.read());
      }
      const out = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0));
      parts.reduce((offset, part) => (out.set(part, offset), offset + part.length), 0);
      return out;
    },
    destroy: () => groups.forEach((group) => group.destroy()),
  };
}

/** Largest |a - b| / (1 + |b|) of the ORT runs against rft on one batch: the same model? */
async function agreement(
  model: PolicyModel,
  ort: OrtPolicy,
  node: OrtNodePolicy,
  nodeWebgpu: OrtNodePolicy | undefined,
  webgpu: boolean,
) {
  const rows = tokenRows(2, 64, model.config.vocabSize);
  const rft = await rftForward(model, rows);
  const expected = await rft.logits();
  rft.destroy();
  const scale = 1 + expected.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
  const error = (logits: Float32Array) =>
    compareClose(logits, expected, { atol: 0, rtol: 0 }).maxAbsError / scale;
  return {
    webgpu: webgpu ? error(await ort.logits("webgpu", rows)) : undefined,
    wasm: error(await ort.logits("wasm", rows)),
    node: error(await node.logits(rows)),
    nodeWebgpu: nodeWebgpu && error(await nodeWebgpu.logits(rows)),
  };
}

/** Best prefill tokens/s of rft and the ORT runs on `batch` rows of `seq` tokens. */
async function benchShape(
  model: PolicyModel,
  ort: OrtPolicy,
  node: OrtNodePolicy,
  nodeWebgpu: OrtNodePolicy | undefined,
  seq: number,
  batch: number,
  minMs: number,
  rounds: number,
  webgpu: boolean,
): Promise<Pick<Row, "rft" | "ortWebgpu" | "ortWasm" | "ortNode" | "ortNodeWebgpu">> {
  const rows = tokenRows(batch, seq, model.config.vocabSize);
  const rft = await rftForward(model, rows);
  const contenders: Record<string, (count: number) => Promise<number>> = {
    rft: (count: number) => rft.time(count),
    ...(webgpu ? { ortWebgpu: (count: number) => ort.timeForward("webgpu", rows, count) } : {}),
    ortWasm: (count: number) => ort.timeForward("wasm", rows, count),
    ortNode: (count: number) => node.timeForward(rows, count),
    ...(nodeWebgpu
      ? { ortNodeWebgpu: (count: number) => nodeWebgpu.timeForward(rows, count) }
      : {}),
  };
  const best: Record<string, number> = {};
  for (let round = 0; round < rounds; round++) {
    for (const [name, runs] of Object.entries(contenders)) {
      const tokensPerS = (batch * seq) / (await timeRuns(runs, minMs) / 1000);
      best[name] = Math.max(best[name] ?? 0, tokensPerS);
    }
  }
  rft.destroy();
  const { rft: rftRate, ortWebgpu, ortWasm, ortNode, ortNodeWebgpu } = best;
  return { rft: rftRate, ortWebgpu, ortWasm, ortNode, ortNodeWebgpu };
}

async function main() {
  const { values } = benchArgs(SCRIPT, {
    args: Deno.args,
    options: {
      models: { type: "string", default: "tiny" },
      seqs: { type: "string", default: "64,256" },
      batches: { type: "string", default: "1,8" },
      "webgpu-batches": { type: "string" },
      "min-ms": { type: "string", default: "1000" },
      rounds: { type: "string", default: "2" },
      "ort-node-webgpu": { type: "boolean" },
      json: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return console.log(HELP);
  const list = (flag: "seqs" | "batches") =>
    values[flag].split(",").map((text) => integerFlag(SCRIPT, flag, text));
  const [seqs, batches] = [list("seqs"), list("batches")];
  const webgpuBatches = values["webgpu-batches"] === undefined
    ? batches
    : values["webgpu-batches"].split(",").filter((t) => t !== "").map((text) =>
      integerFlag(SCRIPT, "webgpu-batches", text)
    );
  const minMs = integerFlag(SCRIPT, "min-ms", values["min-ms"]);
  const rounds = integerFlag(SCRIPT, "rounds", values.rounds);
  const gpu = await getGpu();
  console.log(
    `adapter: ${gpu.summary.description}${gpu.summary.isFallback ? " (fallback, CPU)" : ""}`,
  );
  const models = [];
  const results: Row[] = [];
  for (const name of values.models.split(",")) {
    const { model, ort, cfg, params, parameters, onnxBytes } = await exportedPolicy(name, gpu);
    const node = await OrtNodePolicy.create(cfg, params);
    const nodeWebgpu = await OrtNodePolicy.webgpuIfWanted(values["ort-node-webgpu"], cfg, params);
    const sameModel = await agreement(model, ort, node, nodeWebgpu, webgpuBatches.length > 0);
    console.log(
      `model ${name}: ${figure(parameters / 1e6)}M parameters, ONNX ${
        figure(onnxBytes / 2 ** 20)
      } MiB (opset 17, src/export/); max |ORT logit - rft logit| / (1 + max |logit|): webgpu ${
        sameModel.webgpu?.toExponential(1) ?? "-"
      }, wasm ${sameModel.wasm.toExponential(1)}, node ${
        sameModel.node.toExponential(1)
      }, node-webgpu ${sameModel.nodeWebgpu?.toExponential(1) ?? "-"}`,
    );
    models.push({ model: name, parameters, onnxBytes, sameModel });
    for (const seq of seqs) {
      for (const batch of batches) {
        const webgpu = webgpuBatches.includes(batch);
        const rates = await benchShape(
          model,
          ort,
          node,
          nodeWebgpu,
          seq,
          batch,
          minMs,
          rounds,
          webgpu,
        );
        results.push({ model: name, seq, batch, ...rates });
        reportMeasured(`${name} seq ${seq} batch ${batch}`, results[results.length - 1]);
      }
    }
    await ort.release();
    await node.release();
    await nodeWebgpu?.release();
    model.destroy();
  }
  const maybe = (x?: number) => (x === undefined ? "-" : figure(x));
  console.log(`\nprefill tokens/s (best of ${rounds}, >= ${minMs} ms each, wall clock)`);
  console.log(formatTable<Row>([
    ["model", (r) => r.model],
    ["seq x batch", (r) => `${r.seq} x ${r.batch}`],
    ["rft", (r) => figure(r.rft)],
    ["ort-webgpu", (r) => r.ortWebgpu === undefined ? "-" : figure(r.ortWebgpu)],
    ["ort-wasm2t", (r) => figure(r.ortWasm)],
    ["ort-node", (r) => figure(r.ortNode)],
    ["ort-node-webgpu", (r) => maybe(r.ortNodeWebgpu)],
    ["rft/webgpu", (r) => maybe(r.ortWebgpu && r.rft / r.ortWebgpu)],
    ["rft/wasm", (r) => figure(r.rft / r.ortWasm)],
    ["rft/node", (r) => figure(r.rft / r.ortNode)],
    ["rft/node-webgpu", (r) => maybe(r.ortNodeWebgpu && r.rft / r.ortNodeWebgpu)],
  ], results));
  if (values.json) {
    await writeJsonReport(values.json, "forward", gpu, { minMs, rounds, models, prefill: results });
  }
}

if (import.meta.main) {
  await main();
  Deno.exit(0); // ORT's wasm worker threads would keep the process alive
}
