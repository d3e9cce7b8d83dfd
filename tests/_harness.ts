/**
 * Test harness for ops: run a small graph on the GPU, compare with a CPU reference, and check
 * gradients from the runtime's autodiff against central finite differences of the f64 CPU
 * reference (precise, so tolerances can stay tight).
 */

import { getGpu } from "../src/gpu/device.ts";
import { grad } from "../src/graph/autodiff.ts";
import { compileGraph } from "../src/graph/executable.ts";
import { Graph } from "../src/graph/graph.ts";
import type { DType, HostData, Tensor } from "../src/graph/tensor.ts";
import { shapeSize } from "../src/graph/tensor.ts";
import { uniformArray } from "../src/util/random.ts";
import { assertClose } from "./_assert_close.ts";

/** An input of a test graph: its shape and data. */
export interface TestInput {
  shape: readonly number[];
  data: HostData;
  dtype?: DType;
}

/** A test input with uniform random data in [lo, hi). */
export function randomInput(shape: readonly number[], seed: number, lo = -1, hi = 1): TestInput {
  return { shape, data: uniformArray(shapeSize(shape), seed, lo, hi) };
}

/** Builds a graph with `inputs`, runs what `build` returns once, and reads the outputs. */
export async function runOps(
  inputs: readonly TestInput[],
  build: (...xs: Tensor[]) => Tensor | Tensor[],
): Promise<HostData[]> {
  const gpu = await getGpu();
  const g = new Graph();
  const xs = inputs.map((inp, i) => g.input(inp.shape, inp.dtype ?? "f32", `x${i}`));
  const built = build(...xs);
  const outputs = Array.isArray(built) ? built : [built];
  const exe = await compileGraph(gpu, outputs, "test");
  try {
    await exe.run(new Map(xs.map((x, i) => [x, inputs[i].data])));
    return await exe.read(outputs);
  } finally {
    exe.destroy();
  }
}

/** Options of {@link checkGradients}. */
export interface GradCheck {
  inputs: readonly TestInput[];
  /** Indices of the inputs to differentiate (default: all f32 inputs). */
  wrt?: readonly number[];
  build: (...xs: Tensor[]) => Tensor;
  /** f64 CPU reference of the same function. */
  reference: (...xs: Float64Array[]) => ArrayLike<number>;
  eps?: number;
  atol?: number;
  rtol?: number;
  label: string;
  seed?: number;
}

/**
 * Differentiates `sum(build(...) * R)` (R random, fixed by seed) with the graph autodiff on the
 * GPU and compares each gradient with central differences of `sum(reference(...) * R)` in f64.
 */
export async function checkGradients(opts: GradCheck): Promise<void> {
  const { inputs, build, reference, label } = opts;
  const wrt = opts.wrt ??
    inputs.map((_, i) => i).filter((i) => (inputs[i].dtype ?? "f32") === "f32");
  const eps = opts.eps ?? 1e-6;
  const gpu = await getGpu();
  const g = new Graph();
  const xs = inputs.map((inp, i) => g.input(inp.shape, inp.dtype ?? "f32", `x${i}`));
  const y = build(...xs);
  const projection = uniformArray(y.size, opts.seed ?? 99);
  const seed = g.constant(projection, y.shape, "projection");
  const grads = grad(y, wrt.map((i) => xs[i]), seed);
  const exe = await compileGraph(gpu, grads, "gradcheck");
  let gpuGrads: HostData[];
  try {
    await exe.run(new Map(xs.map((x, i) => [x, inputs[i].data])));
    gpuGrads = await exe.read(grads);
  } finally {
    exe.destroy();
  }

  const base = inputs.map((inp) => Float64Array.from(inp.data));
  const objective = (args: Float64Array[]) => {
    const out = reference(...args);
    let s = 0;
    for (let i = 0; i < out.length; i++) s += out[i] * projection[i];
    return s;
  };
  wrt.forEach((inputIndex, k) => {
    const x = base[inputIndex];
    const numeric = new Float64Array(x.length);
    for (let j = 0; j < x.length; j++) {
      const keep = x[j];
      const h = eps * Math.max(1, Math.abs(keep));
      x[j] = keep + h;
      const up = objective(base);
      x[j] = keep - h;
      const down = objective(base);
      x[j] = keep;
      numeric[j] = (up - down) / (2 * h);
    }
    assertClose(gpuGrads[k], numeric, {
      atol: opts.atol ?? 1e-4,
      rtol: opts.rtol ?? 1e-3,
      label: `${label}: gradient of input ${inputIndex}`,
    });
  });
}
