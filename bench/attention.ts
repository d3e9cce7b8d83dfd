/**
 * `deno run -A bench/attention.ts`: causal attention forward, and forward + backward (dq, dk,
 * dv), with each kernel family forced in turn (the register-blocked kernels written for CPU
 * adapters, the FlashAttention-2-style `flash64` and `flash32` for GPUs), on one shape: GPU time
 * per call (timestamps on GPUs; wall clock on CPU adapters) and the attention FLOP rate (forward
 * 2 B H T^2 D for the causal half of both products, backward 2.5 times that), plus what the
 * autotuner picks. Each kernel's outputs are checked against the register kernels' (max abs
 * difference). The train step's attention at the SmolLM2-135M shape is `--shape 8,256,9,3,64`.
 */

import { getGpu, type GpuContext } from "../src/gpu/device.ts";
import { timeDispatches } from "../src/gpu/autotune.ts";
import { grad } from "../src/graph/autodiff.ts";
import { compileGraph } from "../src/graph/executable.ts";
import { Graph } from "../src/graph/graph.ts";
import type { HostData } from "../src/graph/tensor.ts";
import { causalAttention } from "../src/ops/attention.ts";
import {
  ATTENTION_KERNELS,
  type AttentionKernel,
  chooseAttentionKernel,
} from "../src/ops/attention_kernels.ts";
import { uniformArray } from "../src/util/random.ts";
import { benchArgs } from "./_flags.ts";
import { figure, reportMeasured, writeJsonReport } from "./_report.ts";
import { timeGpu } from "./_rft_matmul.ts";
import { type Column, formatTable } from "./_table.ts";

const SCRIPT = "bench/attention.ts";
const HELP = `Usage: deno run -A ${SCRIPT} [--shape B,T,H,Hkv,D] [--window W]
  [--kernels ${ATTENTION_KERNELS.join(",")}] [--min-ms 300] [--json FILE]
--shape   batch, sequence, query heads, kv heads, head dim (default 2,64,4,2,64; the train
          step at the SmolLM2-135M shape: 8,256,9,3,64)
--window  sliding window (default 0: none)`;

/** One kernel family's figures. */
interface Row {
  kernel: AttentionKernel;
  forwardMs: number;
  trainMs: number;
  forwardGflops: number;
  trainGflops: number;
  /** Max |difference| from the register kernels' output and gradients. */
  maxDiff: number;
}

/** Sizes of the benchmark's problem. */
interface Shape {
  batch: number;
  seq: number;
  heads: number;
  kvHeads: number;
  headDim: number;
}

/** Forward and forward + backward of `kernel` on `shape`: ms per call and the outputs. */
async function measure(
  gpu: GpuContext,
  shape: Shape,
  window: number,
  kernel: AttentionKernel,
  minMs: number,
): Promise<{ forwardMs: number; trainMs: number; outputs: HostData[] }> {
  const { batch, seq, heads, kvHeads, headDim } = shape;
  const g = new Graph();
  const q = g.input([batch, seq, heads, headDim], "f32", "q");
  const k = g.input([batch, seq, kvHeads, headDim], "f32", "k");
  const v = g.input([batch, seq, kvHeads, headDim], "f32", "v");
  const ids = g.input([batch, seq], "i32", "segment_ids");
  const y = causalAttention(q, k, v, ids, { kernel, window });
  const grads = grad(y, [q, k, v], g.constant(uniformArray(y.size, 5), y.shape));
  const feeds = new Map<typeof q, HostData>([
    [q, uniformArray(q.size, 1)],
    [k, uniformArray(k.size, 2)],
    [v, uniformArray(v.size, 3)],
    [ids, new Int32Array(batch * seq)],
  ]);
  const forward = await compileGraph(gpu, [y], `attention ${kernel}`);
  const train = await compileGraph(gpu, [y, ...grads], `attention ${kernel} + backward`);
  try {
    await forward.run(feeds);
    await train.run(feeds);
    const outputs = await train.read([y, ...grads]);
    const time = (dispatches: typeof forward.dispatches) =>
      timeGpu((reps) => timeDispatches(gpu, dispatches, reps), minMs);
    return {
      forwardMs: await time(forward.dispatches),
      trainMs: await time(train.dispatches),
      outputs,
    };
  } finally {
    forward.destroy();
    train.destroy();
  }
}

/** The largest |a[i] - b[i]|. */
function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

function parseShape(text: string): Shape {
  const dims = text.split(",").map(Number);
  const [batch, seq, heads, kvHeads, headDim] = dims;
  if (dims.length !== 5 || !dims.every((d) => Number.isInteger(d) && d > 0) || heads % kvHeads) {
    throw new Error(`Cannot run ${SCRIPT}: expected --shape B,T,H,Hkv,D (Hkv dividing H)\n${HELP}`);
  }
  return { batch, seq, heads, kvHeads, headDim };
}

async function main() {
  const { values } = benchArgs(SCRIPT, {
    args: Deno.args,
    options: {
      shape: { type: "string", default: "2,64,4,2,64" },
      window: { type: "string", default: "0" },
      kernels: { type: "string", default: ATTENTION_KERNELS.join(",") },
      "min-ms": { type: "string", default: "300" },
      json: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(HELP);
    return;
  }
  const shape = parseShape(values.shape);
  const window = Number(values.window);
  const minMs = Number(values["min-ms"]);
  const kernels = values.kernels.split(",") as AttentionKernel[];
  if (kernels.some((k) => !ATTENTION_KERNELS.includes(k)) || !(minMs > 0) || !(window >= 0)) {
    throw new Error(`Cannot run ${SCRIPT}: unknown kernel, bad --min-ms or --window\n${HELP}`);
  }
  const gpu = await getGpu();
  console.log(`adapter: ${gpu.summary.description}${gpu.summary.isFallback ? " (CPU)" : ""}`);
  const { batch, seq, heads, headDim } = shape;
  const forwardFlops = 2 * batch * heads * seq * seq * headDim;
  const reference = await measure(gpu, shape, window, "register", minMs);
  const rows: Row[] = [];
  for (const kernel of kernels) {
    const m = kernel === "register" ? reference : await measure(gpu, shape, window, kernel, minMs);
    const maxDiff = Math.max(...m.outputs.map((out, i) => maxAbsDiff(out, reference.outputs[i])));
    rows.push({
      kernel,
      forwardMs: m.forwardMs,
      trainMs: m.trainMs,
      forwardGflops: forwardFlops / m.forwardMs / 1e6,
      trainGflops: 3.5 * forwardFlops / m.trainMs / 1e6,
      maxDiff,
    });
    reportMeasured(kernel, rows[rows.length - 1]);
  }
  const columns: Column<Row>[] = [
    ["kernel", (r) => r.kernel],
    ["fwd ms", (r) => figure(r.forwardMs)],
    ["fwd+bwd ms", (r) => figure(r.trainMs)],
    ["fwd GFLOP/s", (r) => figure(r.forwardGflops)],
    ["fwd+bwd GFLOP/s", (r) => figure(r.trainGflops)],
    ["max |diff| vs register", (r) => r.maxDiff.toExponential(1)],
  ];
  console.log(
    `\ncausal attention ${values.shape} (B,T,H,Hkv,D)${window ? `, window ${window}` : ""}`,
  );
  console.log(formatTable(columns, rows));
  const picks: Record<string, AttentionKernel> = {};
  for (const entry of ["forward", "backward_q", "backward_kv"] as const) {
    const math = { scale: 1 / Math.sqrt(headDim), window, softcap: 0 };
    picks[entry] = await chooseAttentionKernel(gpu, { op: SCRIPT, entry, dims: shape, math });
  }
  console.log(`autotune's choice here: ${JSON.stringify(picks)}`);
  if (values.json) {
    await writeJsonReport(values.json, "attention", gpu, {
      shape,
      window,
      minMs,
      attention: rows,
      picks,
    });
  }
}

if (import.meta.main) await main();
