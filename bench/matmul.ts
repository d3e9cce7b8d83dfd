/**
 * `deno task bench`: rft's matmul against onnxruntime-web (WebGPU EP and 2-thread wasm EP) on
 * M = N = K in {128, 256, 512, 1024}, plus the graph runtime's per-dispatch overhead. rft's
 * number is the autotuned graph variant with data on the GPU and many repetitions in one submit;
 * the texture-operand prototype is shown beside it. Each cell is the best of `--rounds`
 * interleaved measurements (the machine may be shared). `--json FILE` also writes the results.
 */

import { parseArgs } from "node:util";
import { timeDispatches, timeEncoded } from "../src/gpu/autotune.ts";
import { TENSOR_USAGE } from "../src/gpu/buffer_pool.ts";
import { getGpu, type GpuContext } from "../src/gpu/device.ts";
import { prepareDispatch, releaseDispatch } from "../src/gpu/dispatch.ts";
import { readF32 } from "../src/gpu/readback.ts";
import { compileGraph } from "../src/graph/executable.ts";
import { Graph } from "../src/graph/graph.ts";
import { add } from "../src/ops/binary.ts";
import { matmulShapes } from "../src/ops/matmul.ts";
import { chooseMatmulVariant, matmulParams } from "../src/ops/matmul_variants.ts";
import { uniformArray } from "../src/util/random.ts";
import { OrtMatmul, type Timed } from "./_ort.ts";
import { textureMatmul, textureMatmulFits } from "./_texture_matmul.ts";

const HELP =
  `Usage: deno task bench [--sizes 128,256,512,1024] [--min-ms 500] [--rounds 3] [--json FILE]`;

/** GFLOP/s of each contender at one size (null: not applicable). */
interface Row {
  size: number;
  variant: string;
  rft: number;
  texture: number | null;
  ortWebgpu: number;
  ortWasm: number;
}

type Data = Float32Array<ArrayBuffer>;

/** Spot-checks C = A @ B (n x n) on a few entries against f64 sums; throws on a mismatch. */
async function spotCheck(gpu: GpuContext, c: GPUBuffer, a: Data, b: Data, n: number, what: string) {
  const out = await readF32(gpu.device, c, n * n);
  for (let t = 0; t < 16; t++) {
    const i = (t * 7919) % n;
    const j = (t * 104729) % n;
    let sum = 0;
    for (let k = 0; k < n; k++) sum += a[i * n + k] * b[k * n + j];
    if (Math.abs(out[i * n + j] - sum) > 1e-3 * (1 + Math.abs(sum))) {
      throw new Error(
        `${what} is wrong at [${i},${j}]: expected ${sum}, received ${out[i * n + j]}`,
      );
    }
  }
}

/** Repetitions of `micros(reps)` (GPU microseconds per rep) lasting about minMs; ms per rep. */
async function timeGpu(micros: (reps: number) => Promise<number>, minMs: number) {
  const single = await micros(1); // also compiles and warms up
  const reps = Math.max(2, Math.min(1000, Math.ceil((minMs * 1000) / Math.max(single, 1))));
  return (await micros(reps)) / 1000;
}

/** rft's autotuned graph variant and the texture prototype on n x n operands in GPU buffers. */
async function rftContenders(gpu: GpuContext, n: number, a: Data, b: Data) {
  const { device } = gpu;
  const buffer = (data?: Data) => {
    const buf = device.createBuffer({ size: n * n * 4, usage: TENSOR_USAGE });
    if (data) device.queue.writeBuffer(buf, 0, data);
    return buf;
  };
  const [ba, bb, bc] = [buffer(a), buffer(b), buffer()];
  const p = matmulShapes([n, n], [n, n]);
  const variant = await chooseMatmulVariant(gpu, p);
  const params = matmulParams(p);
  const dispatch = await prepareDispatch(
    gpu,
    variant.spec(p),
    [ba, bb, bc],
    params,
    variant.workgroups(p),
  );
  const graphVariant: Timed = {
    time: (minMs) => timeGpu((reps) => timeDispatches(gpu, [dispatch], reps), minMs),
    dispose: () => releaseDispatch(dispatch),
  };
  let texture: Timed | null = null;
  if (textureMatmulFits(n, n, n)) {
    const proto = await textureMatmul(gpu, ba, bb, bc, n, n, n);
    const encode = (reps: number) => (encoder: GPUCommandEncoder) => {
      for (let r = 0; r < reps; r++) proto.encode(encoder);
    };
    texture = {
      time: (minMs) => timeGpu((reps) => timeEncoded(gpu, encode(reps), reps), minMs),
      dispose: () => proto.destroy(),
    };
  }
  return {
    variant: variant.name,
    graphVariant,
    texture,
    /** Runs one contender once more and checks its result. */
    async check(which: Timed, what: string) {
      await which.time(0);
      await spotCheck(gpu, bc, a, b, n, what);
    },
    dispose() {
      graphVariant.dispose();
      texture?.dispose();
      [ba, bb, bc].forEach((x) => x.destroy());
    },
  };
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
) {
  const a = uniformArray(n * n, 1);
  const b = uniformArray(n * n, 2);
  const rft = await rftContenders(gpu, n, a, b);
  const contenders = {
    rft: rft.graphVariant,
    texture: rft.texture,
    ortWebgpu: ort.onWebgpu(a, b, n, n, n),
    ortWasm: ort.onWasm(a, b, n, n, n),
  };
  const best: Record<string, number> = {};
  try {
    await rft.check(rft.graphVariant, `rft ${rft.variant}`);
    if (rft.texture) await rft.check(rft.texture, "texture prototype");
    for (let round = 0; round < rounds; round++) {
      for (const [name, contender] of Object.entries(contenders)) {
        if (!contender) continue;
        const gflops = (2 * n ** 3) / (await contender.time(minMs)) / 1e6;
        best[name] = Math.max(best[name] ?? 0, gflops);
      }
    }
  } finally {
    rft.dispose();
    contenders.ortWebgpu.dispose();
  }
  return {
    size: n,
    variant: rft.variant,
    rft: best.rft,
    texture: best.texture ?? null,
    ortWebgpu: best.ortWebgpu,
    ortWasm: best.ortWasm,
  };
}

function printTable(rows: readonly Row[]): void {
  const num = (x: number | null, digits = 1) => (x === null ? "-" : x.toFixed(digits));
  const ratio = (x: number | null, y: number) => num(x === null ? null : x / y, 2);
  const columns: [string, number, (r: Row) => string][] = [
    ["size", 6, (r) => String(r.size)],
    ["rft variant", 15, (r) => r.variant],
    ["rft", 6, (r) => num(r.rft)],
    ["texture*", 8, (r) => num(r.texture)],
    ["ort-webgpu", 10, (r) => num(r.ortWebgpu)],
    ["ort-wasm2t", 10, (r) => num(r.ortWasm)],
    ["rft/webgpu", 10, (r) => ratio(r.rft, r.ortWebgpu)],
    ["rft/wasm", 8, (r) => ratio(r.rft, r.ortWasm)],
    ["tex*/webgpu", 11, (r) => ratio(r.texture, r.ortWebgpu)],
    ["tex*/wasm", 9, (r) => ratio(r.texture, r.ortWasm)],
  ];
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 1 ? c.padEnd(columns[i][1]) : c.padStart(columns[i][1]))).join(
      " | ",
    );
  console.log("\nmatmul GFLOP/s, M = N = K (best of rounds)");
  console.log(line(columns.map(([title]) => title)));
  for (const r of rows) console.log(line(columns.map(([, , cell]) => cell(r))));
  console.log(
    "* texture: prototype reading A, B from textures (copied from the buffers in every run);" +
      " not yet a graph variant",
  );
}

async function main() {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      sizes: { type: "string", default: "128,256,512,1024" },
      "min-ms": { type: "string", default: "500" },
      rounds: { type: "string", default: "3" },
      json: { type: "string" },
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
    rows.push(await benchSize(gpu, ort, size, minMs, rounds));
    console.error(`  measured ${size}^3`);
  }
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
