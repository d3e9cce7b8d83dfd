/**
 * The few-second self-check `rft info` runs: small graphs through the real kernels (forward and
 * autodiff backward), compared with the CPU references. Proves the adapter computes what rft
 * expects; not a substitute for the test suite.
 */

import type { GpuContext } from "../gpu/device.ts";
import { grad } from "../graph/autodiff.ts";
import { compileGraph } from "../graph/executable.ts";
import { Graph } from "../graph/graph.ts";
import type { Tensor } from "../graph/tensor.ts";
import { compareClose, type Comparison } from "../util/compare.ts";
import { uniformArray } from "../util/random.ts";
import { matmul } from "../ops/matmul.ts";
import { softmax } from "../ops/softmax.ts";
import { matmulRef } from "../reference/matmul.ts";
import { softmaxRef } from "../reference/softmax.ts";

/** Outcome of the self-check: one line per check. */
export interface SelfCheckReport {
  ok: boolean;
  lines: string[];
}

interface Check {
  name: string;
  run(gpu: GpuContext): Promise<Comparison>;
}

/** Builds `y = build(x...)`, runs it once and returns the outputs. */
async function evaluate(
  gpu: GpuContext,
  inputs: { shape: number[]; data: Float32Array<ArrayBuffer> }[],
  build: (g: Graph, xs: Tensor[]) => Tensor[],
): Promise<Float32Array[]> {
  const g = new Graph();
  const xs = inputs.map((inp, i) => g.input(inp.shape, "f32", `x${i}`));
  const outs = build(g, xs);
  const exe = await compileGraph(gpu, outs, "self-check");
  try {
    await exe.run(new Map(xs.map((x, i) => [x, inputs[i].data])));
    return (await exe.read(outs)) as Float32Array[];
  } finally {
    exe.destroy();
  }
}

const M = 67, K = 45, N = 71;

const CHECKS: Check[] = [
  {
    name: `matmul ${M}x${K} @ ${K}x${N}`,
    async run(gpu) {
      const a = uniformArray(M * K, 1);
      const b = uniformArray(K * N, 2);
      const [c] = await evaluate(gpu, [{ shape: [M, K], data: a }, { shape: [K, N], data: b }], (
        _g,
        [x, y],
      ) => [matmul(x, y)]);
      return compareClose(c, matmulRef(a, b, { m: M, k: K, n: N }));
    },
  },
  {
    name: "softmax 5x1000 (+/-30 logits)",
    async run(gpu) {
      const x = uniformArray(5 * 1000, 3, -30, 30);
      const [y] = await evaluate(gpu, [{ shape: [5, 1000], data: x }], (_g, [t]) => [softmax(t)]);
      return compareClose(y, softmaxRef(x, 1000), { atol: 1e-6, rtol: 1e-4 });
    },
  },
  {
    name: "autodiff d/dA sum(A@B)",
    async run(gpu) {
      const a = uniformArray(7 * 9, 4);
      const b = uniformArray(9 * 5, 5);
      const [da] = await evaluate(gpu, [{ shape: [7, 9], data: a }, { shape: [9, 5], data: b }], (
        _g,
        [x, y],
      ) => grad(matmul(x, y), [x]));
      // d/dA sum(A B) = row sums of B, broadcast over rows of A.
      const expected = Float64Array.from({ length: 7 * 9 }, (_, i) => {
        const k = i % 9;
        let s = 0;
        for (let j = 0; j < 5; j++) s += b[k * 5 + j];
        return s;
      });
      return compareClose(da, expected);
    },
  },
];

/** Runs every check and reports each as one line. */
export async function runSelfCheck(gpu: GpuContext): Promise<SelfCheckReport> {
  const lines: string[] = [];
  let ok = true;
  for (const check of CHECKS) {
    const started = performance.now();
    let line: string;
    try {
      const result = await check.run(gpu);
      ok &&= result.ok;
      line = `${result.ok ? "ok  " : "FAIL"} ${check.name}: ${result.message}`;
    } catch (err) {
      ok = false;
      line = `FAIL ${check.name}: ${(err as Error).message}`;
    }
    lines.push(`${line} (${(performance.now() - started).toFixed(0)} ms)`);
  }
  return { ok, lines };
}
