/**
 * rft's graph op `matmul` on n x n operands, timed by replaying its dispatches: what
 * `bench/matmul.ts` compares with ONNX Runtime and `bench/train.ts` divides model FLOPs by.
 */

import { timeDispatches } from "../src/gpu/autotune.ts";
import type { GpuContext } from "../src/gpu/device.ts";
import { compileGraph } from "../src/graph/executable.ts";
import { Graph } from "../src/graph/graph.ts";
import { matmul, matmulShapes } from "../src/ops/matmul.ts";
import { chooseMatmulVariant } from "../src/ops/matmul_autotune.ts";
import { uploadTensor } from "../src/model/upload.ts";
import { fromF16, toF16 } from "../src/util/half.ts";
import { uniformArray } from "../src/util/random.ts";
import type { Timed } from "./_ort.ts";

/** Operand data of a matmul benchmark. */
export type Data = Float32Array<ArrayBuffer>;

/** Spot-checks C = A @ B (n x n) on a few entries against f64 sums; throws on a mismatch. */
export function spotCheck(out: ArrayLike<number>, a: Data, b: Data, n: number, what: string) {
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
export async function timeGpu(micros: (reps: number) => Promise<number>, minMs: number) {
  const single = await micros(1); // also compiles and warms up
  const reps = Math.max(2, Math.min(1000, Math.ceil((minMs * 1000) / Math.max(single, 1))));
  return (await micros(reps)) / 1000;
}

/** The graph op `matmul` on n x n operands fed once, timed by replaying its dispatches. */
export async function rftMatmul(gpu: GpuContext, n: number, a: Data, b: Data) {
  const g = new Graph();
  const [x, y] = [g.input([n, n], "f32", "a"), g.input([n, n], "f32", "b")];
  const z = matmul(x, y);
  const exe = await compileGraph(gpu, [z], `matmul ${n}`);
  const read = async () => (await exe.read([z]))[0];
  await exe.run(new Map([[x, a], [y, b]]));
  spotCheck(await read(), a, b, n, `rft matmul ${n}^3`);
  const timed: Timed = {
    time: (minMs) => timeGpu((reps) => timeDispatches(gpu, exe.dispatches, reps), minMs),
    dispose: () => exe.destroy(),
  };
  // The op's choice: compiling autotuned it, so this only recalls the cached decision.
  const variant = await chooseMatmulVariant(gpu, matmulShapes([n, n], [n, n]));
  return { variant: variant.name, timed, read };
}

/** rft's best GFLOP/s over `rounds` timings of the n^3 matmul (each about `minMs`). */
export async function rftMatmulRate(
  gpu: GpuContext,
  n: number,
  rounds: number,
  minMs: number,
): Promise<{ variant: string; gflops: number }> {
  const rft = await rftMatmul(gpu, n, uniformArray(n * n, 1), uniformArray(n * n, 2));
  let best = 0;
  try {
    for (let round = 0; round < rounds; round++) {
      best = Math.max(best, (2 * n ** 3) / (await rft.timed.time(minMs)) / 1e6);
    }
  } finally {
    rft.timed.dispose();
  }
  return { variant: rft.variant, gflops: best };
}

/**
 * The graph op `matmul` of n x n activations by an n x n weight stored as f16 (a variable, as a
 * frozen model's) used transposed (x W^T, the layout of model weights), fed once, timed by
 * replaying its dispatches; spot-checked against f64 sums of the rounded weights. `b` holds the
 * weight's f32 values, rounded to f16 as it is uploaded.
 */
export async function rftHalfMatmul(gpu: GpuContext, n: number, a: Data, b: Data) {
  const bytes = new Uint8Array(b.buffer);
  const weight = await uploadTensor(gpu, { name: "w", dtype: "F32", shape: [n, n], bytes }, {
    storeAs: "f16",
  });
  const rounded = fromF16(toF16(b));
  const g = new Graph();
  const x = g.input([n, n], "f32", "a");
  const z = matmul(x, g.variable(weight), { transB: true });
  const exe = await compileGraph(gpu, [z], `f16 matmul ${n}`);
  await exe.run(new Map([[x, a]]));
  const [out] = await exe.read([z]);
  // x W^T = x (W^T): the check's B is W transposed.
  const t = new Float32Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) t[j * n + i] = rounded[i * n + j];
  spotCheck(out, a, t, n, `rft f16 matmul ${n}^3`);
  const timed: Timed = {
    time: (minMs) => timeGpu((reps) => timeDispatches(gpu, exe.dispatches, reps), minMs),
    dispose: () => {
      exe.destroy();
      weight.buffer.destroy();
    },
  };
  return timed;
}
