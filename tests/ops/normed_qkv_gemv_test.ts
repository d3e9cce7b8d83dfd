// The normed q/k/v gemv (a decoder layer's input RMSNorm and its q, k and v products with their
// biases, one GEMV dispatch on GPUs) against the f64 CPU reference on odd shapes, run here by
// presenting the test adapter as a GPU, with lane sums in workgroup memory and, where subgroups
// work, by subgroup sums: one to eight rows, K a multiple of 4 (8 for halves) off the lanes'
// chunks, GQA (k and v of fewer columns than q), column counts off the 4-column workgroups, q/k/v
// biases (Qwen2's), Gemma's 1 + gamma, bf16 and f16 weights as stored (against the rounded
// weights), a fused qkv module's one weight; what it refuses, and where it does not run.

import { getGpu, type GpuContext } from "../../src/gpu/device.ts";
import { compileGraph } from "../../src/graph/executable.ts";
import { Graph } from "../../src/graph/graph.ts";
import type { Tensor } from "../../src/graph/tensor.ts";
import { normedQkvGemv, normedQkvGemvMisfit } from "../../src/ops/normed_qkv_gemv.ts";
import { normedQkvGemvRef } from "../../src/reference/normed_qkv_gemv.ts";
import { uniformArray } from "../../src/util/random.ts";
import assert from "node:assert/strict";
import { assertEquals, assertThrows } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { storedValues, storedWeight } from "../_half_weight.ts";

interface Case {
  label: string;
  rows: number;
  k: number;
  /** Rows of each weight (q, k, v; or one fused module's). */
  ns: number[];
  format: "f32" | "bf16" | "f16";
  biased: boolean;
  weightOffset?: number;
}

const CASES: Case[] = [
  {
    label: "one row, GQA 4:1, biases",
    rows: 1,
    k: 52,
    ns: [48, 12, 12],
    format: "f32",
    biased: true,
  },
  {
    label: "three rows, Gemma's 1 + gamma, columns off the workgroups",
    rows: 3,
    k: 36,
    ns: [18, 6, 6],
    format: "f32",
    biased: false,
    weightOffset: 1,
  },
  {
    label: "eight rows, long K, bf16, biases",
    rows: 8,
    k: 1000,
    ns: [40, 20, 20],
    format: "bf16",
    biased: true,
  },
  { label: "one row, f16, MHA", rows: 1, k: 24, ns: [16, 16, 16], format: "f16", biased: true },
  {
    label: "two rows, one fused qkv weight",
    rows: 2,
    k: 16,
    ns: [44],
    format: "f32",
    biased: false,
  },
];

// A large eps, so a kernel that drops or misreads it fails.
const EPS = 0.3;

/** The test adapter presented as a GPU, with or without subgroup sums. */
async function presentedAsGpu(hasSubgroups: boolean): Promise<GpuContext> {
  const cpu = await getGpu();
  return { ...cpu, hasSubgroups, summary: { ...cpu.summary, isFallback: false } };
}

/** Runs case `c` on `gpu` (weights as variables, h, gamma and biases as inputs); its output. */
async function runCase(gpu: GpuContext, c: Case, seed: number) {
  const h = uniformArray(c.rows * c.k, seed, -2, 2);
  const gamma = uniformArray(c.k, seed + 1, -1.5, 1.5);
  const values = c.ns.map((n, i) => uniformArray(n * c.k, seed + 2 + i));
  const biases = c.ns.map((n, i) => uniformArray(n, seed + 5 + i));
  const weights = await Promise.all(
    values.map((v, i) => storedWeight(gpu, [c.ns[i], c.k], v, c.format)),
  );
  const g = new Graph();
  const [ht, gammaT] = [g.input([c.rows, 1, c.k]), g.input([c.k])];
  const biasT = c.ns.map((n) => g.input([n]));
  const attrs = { eps: EPS, weightOffset: c.weightOffset };
  const wt = weights.map((w) => g.variable(w));
  const out = normedQkvGemv(ht, gammaT, wt, c.biased ? biasT : undefined, attrs);
  assertEquals(out.shape, [c.rows, 1, c.ns.reduce((a, b) => a + b, 0)]);
  const exe = await compileGraph(gpu, [out], `normed qkv gemv: ${c.label}`);
  try {
    const feeds = new Map<Tensor, Float32Array<ArrayBuffer>>([[ht, h], [gammaT, gamma]]);
    if (c.biased) biasT.forEach((t, i) => feeds.set(t, biases[i]));
    await exe.run(feeds);
    const [got] = await exe.read([out]);
    const want = normedQkvGemvRef(
      h,
      gamma,
      values.map((v) => storedValues(v, c.format)),
      c.biased ? biases : undefined,
      { k: c.k, ns: c.ns, eps: EPS, weightOffset: c.weightOffset },
    );
    return { got, want, labels: exe.dispatches.map((d) => d.label) };
  } finally {
    exe.destroy();
    for (const w of weights) w.buffer.destroy();
  }
}

Deno.test("normed qkv gemv on GPUs matches the CPU reference on odd shapes", async () => {
  const cpu = await getGpu();
  for (const hasSubgroups of cpu.hasSubgroups ? [false, true] : [false]) {
    const gpu = await presentedAsGpu(hasSubgroups);
    for (const [i, c] of CASES.entries()) {
      const format = c.format;
      assertEquals(normedQkvGemvMisfit(gpu, { rows: c.rows, k: c.k, format }), undefined);
      const { got, want, labels } = await runCase(gpu, c, 100 + 10 * i);
      const kernel = hasSubgroups ? "gemv_qkv_subgroups" : "gemv_qkv:";
      assertEquals(labels.length, 1, "one dispatch");
      assert(labels[0].startsWith(kernel), `${labels[0]} is ${kernel}`);
      // f32 sums of K products of values up to ~2 (h) times ~1.5 (gamma) times 1 (weights).
      assertClose(got, want, {
        atol: 4e-6 * c.k,
        rtol: 2e-5,
        label: `${c.label}, subgroups ${hasSubgroups}`,
      });
    }
  }
});

Deno.test("normed qkv gemv: the bias, eps and norm weight each change the output", async () => {
  const gpu = await presentedAsGpu(false);
  const c = CASES[0];
  const { got } = await runCase(gpu, c, 100);
  const h = uniformArray(c.rows * c.k, 100, -2, 2);
  const gamma = uniformArray(c.k, 101, -1.5, 1.5);
  const values = c.ns.map((n, i) => uniformArray(n * c.k, 102 + i));
  const biases = c.ns.map((n, i) => uniformArray(n, 105 + i));
  const ref = (eps: number, b?: Float32Array[], offset = 0) =>
    normedQkvGemvRef(h, gamma, values, b, { k: c.k, ns: c.ns, eps, weightOffset: offset });
  const far = (want: Float64Array) => got.some((v, i) => Math.abs(v - want[i]) > 1e-3);
  assert(far(ref(EPS)), "the biases matter");
  assert(far(ref(0, biases)), "eps matters");
  assert(far(ref(EPS, biases, 1)), "the norm weight's offset matters");
  assert(!far(ref(EPS, biases)), "the reference itself agrees");
});

Deno.test("normed qkv gemv runs on GPUs within the GEMV kernels' limits only", async () => {
  const gpu = await presentedAsGpu(false);
  const cpu = { ...gpu, summary: { ...gpu.summary, isFallback: true } };
  const limits = { ...gpu.device.limits, maxStorageBuffersPerShaderStage: 8 };
  const eightBuffers = { ...gpu, device: { limits } as unknown as GPUDevice };
  const cases: [GpuContext, number, number, Case["format"], string][] = [
    [
      cpu,
      1,
      64,
      "f32",
      "expected a GPU (CPU adapters compute the norm in the products' operand fills)",
    ],
    [gpu, 9, 64, "f32", "expected at most 8 rows, received 9"],
    [gpu, 1, 50, "f32", "expected K a multiple of 4 for f32 weights, received 50"],
    [gpu, 1, 52, "bf16", "expected K a multiple of 8 for bf16 weights, received 52"],
    [
      eightBuffers,
      1,
      64,
      "f32",
      "expected 9 storage buffers per shader stage, the device allows 8",
    ],
  ];
  for (const [on, rows, k, format, message] of cases) {
    assertEquals(normedQkvGemvMisfit(on, { rows, k, format }), message);
  }
});

Deno.test("normed qkv gemv refuses operands that do not make q, k and v", () => {
  const g = new Graph();
  const h = g.input([1, 12]);
  const gamma = g.input([12]);
  const [wq, wk] = [g.input([8, 12]), g.input([4, 12])];
  const attrs = { eps: 1e-6 };
  assertThrows(() => normedQkvGemv(h, gamma, [wq, wk], undefined, attrs), Error, "expected 1 or 3");
  assertThrows(
    () => normedQkvGemv(h, gamma, [wq, wk, g.input([4, 16])], undefined, attrs),
    Error,
    "[N, 12]",
  );
  assertThrows(
    () => normedQkvGemv(h, g.input([10]), [wq, wk, wk], undefined, attrs),
    Error,
    "norm weight [12]",
  );
  assertThrows(
    () => normedQkvGemv(h, gamma, [wq, wk, wk], [g.input([8]), g.input([4]), g.input([8])], attrs),
    Error,
    "biases of shapes [8], [4], [4]",
  );
});
