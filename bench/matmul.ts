/**
 * `deno task bench`: rft's matmul against onnxruntime-web (WebGPU EP and 2-thread wasm EP) and
 * onnxruntime-node's native CPU EP (MLAS, the ceiling a JavaScript user on this CPU can reach) on
 * M = N = K in {128, 256, 512, 1024}, plus the graph runtime's per-dispatch overhead. rft's
 * number is the graph op `matmul` (autotuned variant, operand copies of texture variants
 * included) compiled into a graph, data on the GPU, many repetitions in one submit. Each cell is
 * the best of `--rounds` interleaved measurements (the machine may be shared). `--json FILE` also
 * writes the results.
 */

import { getGpu, type GpuContext } from "../src/gpu/device.ts";
import { compileGraph } from "../src/graph/executable.ts";
import { Graph } from "../src/graph/graph.ts";
import { add } from "../src/ops/binary.ts";
import { uniformArray } from "../src/util/random.ts";
import { OrtMatmul, type Timed } from "./_ort.ts";
import { rftHalfMatmul, rftMatmul, spotCheck } from "./_rft_matmul.ts";
import { benchArgs } from "./_flags.ts";
import { reportMeasured } from "./_report.ts";
import { type Column, formatTable } from "./_table.ts";

const HELP =
  `Usage: deno task bench [--sizes 128,256,512,1024] [--min-ms 500] [--rounds 3] [--f16] [--json FILE]
--f16  also rft's matmul by an f16 weight (x W^T, f32 sums)`;

/** GFLOP/s of each contender at one size, and the variant rft's autotune chose. */
interface Row {
  size: number;
  variant: string;
  rft: number;
  ortWebgpu: number;
  ortWasm: number;
  ortNode: number;
  /** rft's product by an f16 weight (with --f16). */
  rftF16?: number;
}

/** Microseconds per dispatch of a compiled graph of `ops` chained adds on 16 values. */
async function dispatchOverhead(gpu: GpuContext, ops: number, runs: number) {
  const g = new Graph();
  const x = g.input([16]);
  let y = x;
  for (let i = 0; i < ops; i++) y = add(y, x);
  const exe = await compileGraph(gpu, [y], "overhead");
  await exe.run(new Map([[x, new Float32Array(16).fill(1)]]));
  await exe.read([y]);
  const start = performance.now();
  for (let r = 0; r < runs; r++) await exe.run();
  await gpu.device.queue.onSubmittedWorkDone();
  const micros = ((performance.now() - start) * 1000) / (runs * exe.stats.dispatches);
  exe.destroy();
  return { ops, runs, dispatches: exe.stats.dispatches, microsPerDispatch: micros };
}

async function benchSize(
  gpu: GpuContext,
  ort: OrtMatmul,
  n: number,
  minMs: number,
  rounds: number,
  f16: boolean,
) {
  const a = uniformArray(n * n, 1);
  const b = uniformArray(n * n, 2);
  const rft = await rftMatmul(gpu, n, a, b);
  const contenders: Record<string, Timed> = {
    rft: rft.timed,
    ortWebgpu: ort.onWebgpu(a, b, n, n, n),
    ortWasm: ort.onHost("wasm", a, b, n, n, n),
    ortNode: ort.onHost("node", a, b, n, n, n),
    ...(f16 ? { rftF16: await rftHalfMatmul(gpu, n, a, b) } : {}),
  };
  const best: Record<string, number> = {};
  try {
    for (let round = 0; round < rounds; round++) {
      for (const [name, contender] of Object.entries(contenders)) {
        const gflops = (2 * n ** 3) / (await contender.time(minMs)) / 1e6;
        best[name] = Math.max(best[name] ?? 0, gflops);
      }
    }
    // The timed replays recorded the operand copies too: the result must still be right.
    spotCheck(await rft.read(), a, b, n, `rft matmul ${n}^3 after timing`);
  } finally {
    Object.values(contenders).forEach((c) => c.dispose());
  }
  return {
    size: n,
    variant: rft.variant,
    rft: best.rft,
    ortWebgpu: best.ortWebgpu,
    ortWasm: best.ortWasm,
    ortNode: best.ortNode,
    ...(f16 ? { rftF16: best.rftF16 } : {}),
  };
}

function printTable(rows: readonly Row[]): void {
  const columns: Column<Row>[] = [
    ["size", (r) => String(r.size)],
    ["rft variant", (r) => r.variant],
    ["rft", (r) => r.rft.toFixed(1)],
    ["ort-webgpu", (r) => r.ortWebgpu.toFixed(1)],
    ["ort-wasm2t", (r) => r.ortWasm.toFixed(1)],
    ["ort-node", (r) => r.ortNode.toFixed(1)],
    ["rft/webgpu", (r) => (r.rft / r.ortWebgpu).toFixed(2)],
    ["rft/wasm", (r) => (r.rft / r.ortWasm).toFixed(2)],
    ["rft/ort-node", (r) => (r.rft / r.ortNode).toFixed(2)],
    ...(rows.some((r) => r.rftF16 !== undefined)
      ? [
        ["rft f16", (r: Row) => r.rftF16?.toFixed(1) ?? "-"],
        ["f16/f32", (r: Row) => r.rftF16 ? (r.rftF16 / r.rft).toFixed(2) : "-"],
      ] as Column<Row>[]
      : []),
  ];
  console.log("\nmatmul GFLOP/s, M = N = K (best of rounds)");
  console.log(formatTable(columns, rows));
  console.log("rft: the graph op matmul; texture variants include their operand copies");
  if (rows.some((r) => r.rftF16 !== undefined)) {
    console.log("rft f16: matmul by a weight stored as f16, used transposed (x W^T), f32 sums");
  }
}

async function main() {
  const { values } = benchArgs("bench/matmul.ts", {
    args: Deno.args,
    options: {
      sizes: { type: "string", default: "128,256,512,1024" },
      "min-ms": { type: "string", default: "500" },
      rounds: { type: "string", default: "3" },
      json: { type: "string" },
      f16: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(HELP);
    return;
  }
  const sizes = values.sizes.split(",").map(Number);
  const minMs = Number(values["min-ms"]);
  const rounds = Number(values.rounds);
  if (
    !sizes.every((s) => Number.isInteger(s) && s > 0) || !(minMs > 0) || !(rounds >= 1)
  ) {
    throw new Error(
      `Cannot run bench: expected --sizes of positive integers, --min-ms > 0, --rounds >= 1\n${HELP}`,
    );
  }
  const gpu = await getGpu();
  const fallback = gpu.summary.isFallback ? " (fallback, CPU)" : "";
  console.log(`adapter: ${gpu.summary.description}${fallback}`);
  console.log(
    `timing: rft ${gpu.hasTimestamps ? "GPU timestamps" : "wall clock"}, ORT wall clock;` +
      ` >= ${minMs} ms per measurement, best of ${rounds}`,
  );
  const ort = await OrtMatmul.create();
  const rows: Row[] = [];
  for (const size of sizes) {
    rows.push(await benchSize(gpu, ort, size, minMs, rounds, Boolean(values.f16)));
    reportMeasured(`${size}^3`, rows[rows.length - 1]);
  }
  await ort.release();
  const overhead = await dispatchOverhead(gpu, 200, 20);
  printTable(rows);
  console.log(
    `\ngraph dispatch overhead: ${overhead.dispatches} chained adds on 16 values, ` +
      `${overhead.runs} runs: ${overhead.microsPerDispatch.toFixed(1)} us per dispatch`,
  );
  if (values.json) {
    const report = {
      adapter: gpu.summary,
      date: new Date().toISOString(),
      minMs,
      rounds,
      matmul: rows,
      dispatchOverhead: overhead,
    };
    await Deno.writeTextFile(values.json, JSON.stringify(report, null, 2) + "\n");
    console.log(`wrote ${values.json}`);
  }
}

if (import.meta.main) {
  await main();
  Deno.exit(0); // ORT's wasm worker threads would keep the process alive
}
