/**
 * Products by weights of halves (f16, bf16 packed two per u32): the GEMV kernels (lane sums in
 * workgroup memory and, where subgroups work, by subgroup sums) and the 8 x 8 workgroup tiles
 * against the f64 product of the rounded weights on odd shapes (rows 1 to 130, N off every
 * tile and workgroup, K from one chunk to 1032, the weight used transposed or not); the accuracy bound of the
 * weights' rounding, measured against the f32 weights; the backward in x against finite
 * differences; what the kernels refuse, by name.
 */

import { getGpu } from "../../src/gpu/device.ts";
import { compileGraph } from "../../src/graph/executable.ts";
import { Graph } from "../../src/graph/graph.ts";
import { GEMV_MAX_ROWS, gemvMisfit } from "../../src/ops/gemv.ts";
import { type HalfKernel, halfMatmul } from "../../src/ops/half_matmul.ts";
import {
  type HalfFormat,
  packHalvesRef,
  unpackHalvesRef,
} from "../../src/reference/half_weights.ts";
import { matmulRef } from "../../src/reference/matmul.ts";
import { matmulShapes } from "../../src/ops/matmul.ts";
import { uniformArray } from "../../src/util/random.ts";
import assert from "node:assert/strict";
import { assertClose } from "../_assert_close.ts";
import { assertEquals, assertRejects, assertThrows } from "../_asserts.ts";
import { checkGradients, runOps, type TestInput } from "../_harness.ts";

interface Case {
  label: string;
  /** x's shape [..., K]. */
  x: number[];
  /** The weight's logical shape: [N, K] with transB, else [K, N]. */
  w: [number, number];
  transB: boolean;
  kernel: HalfKernel;
}

const CASES: Case[] = [
  { label: "gemv, one row, one chunk of K", x: [1, 8], w: [28, 8], transB: true, kernel: "gemv" },
  {
    label: "gemv, 6 rows in two dims, N=132",
    x: [3, 2, 40],
    w: [132, 40],
    transB: true,
    kernel: "gemv",
  },
  { label: "gemv, 8 rows, K=1032", x: [8, 1032], w: [12, 1032], transB: true, kernel: "gemv" },
  { label: "tiles, x W^T, odd M", x: [37, 52], w: [28, 52], transB: true, kernel: "tiled" },
  { label: "tiles, x W", x: [37, 52], w: [52, 28], transB: false, kernel: "tiled" },
  {
    label: "tiles, 130 rows, 3 rows of tiles",
    x: [130, 64],
    w: [68, 64],
    transB: true,
    kernel: "tiled",
  },
  { label: "tiles, one row", x: [1, 36], w: [12, 36], transB: true, kernel: "tiled" },
];

/** The inputs of `c` in `format`: x, the packed weight, and the weight's rounded values. */
function caseData(c: Case, format: HalfFormat, seed: number) {
  const x = uniformArray(c.x.reduce((a, b) => a * b, 1), seed);
  const values = uniformArray(c.w[0] * c.w[1], seed + 1);
  const packed = packHalvesRef(values, format);
  const inputs: TestInput[] = [
    { shape: c.x, data: x },
    { shape: [c.w[0], c.w[1] / 2], data: packed, dtype: "u32" },
  ];
  return { inputs, values, rounded: unpackHalvesRef(packed, format) };
}

/** The f64 product of x by weight values `w` (logical shape of `c`). */
function product(c: Case, x: ArrayLike<number>, w: ArrayLike<number>): Float64Array {
  return matmulRef(x, w, matmulShapes(c.x, c.w, { transB: c.transB }));
}

for (const format of ["f16", "bf16"] as const) {
  Deno.test(`halfMatmul ${format}: GEMV kernels and tiles match the rounded weights' product`, async () => {
    const gpu = await getGpu();
    for (const [i, c] of CASES.entries()) {
      const { inputs, rounded } = caseData(c, format, 100 + 10 * i);
      const [y] = await runOps(
        inputs,
        (x, w) => halfMatmul(x, w, { format, transB: c.transB, kernel: c.kernel }),
      );
      const k = c.x[c.x.length - 1];
      // f32 sums of k products of values in [-1, 1].
      const tol = 2e-7 * k + 1e-6;
      assertClose(y, product(c, inputs[0].data, rounded), {
        atol: tol,
        rtol: 1e-5,
        label: `${format} ${c.label} (subgroups ${gpu.hasSubgroups})`,
      });
    }
  });
}

Deno.test("halfMatmul: the GEMV kernels without subgroups match too", async () => {
  const cpu = await getGpu();
  const gpu = { ...cpu, hasSubgroups: false };
  const c = CASES[2];
  const { inputs, rounded } = caseData(c, "bf16", 150);
  const g = new Graph();
  const [x, w] = [g.input(c.x), g.input(inputs[1].shape, "u32")];
  const y = halfMatmul(x, w, { format: "bf16", transB: true, kernel: "gemv" });
  const exe = await compileGraph(gpu, [y], "half gemv without subgroups");
  try {
    assert(exe.dispatches[0].label.startsWith("gemv:"), exe.dispatches[0].label);
    await exe.run(new Map([[x, inputs[0].data], [w, inputs[1].data]]));
    const [got] = await exe.read([y]);
    assertClose(got, product(c, inputs[0].data, rounded), { atol: 3e-4, rtol: 1e-5 });
  } finally {
    exe.destroy();
  }
});

/**
 * Rounding the weights to `format` moves each product x_k w_k by at most u |x_k w_k| (u: the unit
 * roundoff, 2^-11 for f16, 2^-8 for bf16), so |y - y_f32| <= u sum_k |x_k w_k|; the f32 sums add
 * ~K 2^-24 of the same scale. Checked on a decode-sized product and a prefill-sized one; the
 * measured worst ratio is printed for bench/README.
 */
Deno.test("halfMatmul: the weights' rounding bounds the error (f16 2^-11, bf16 2^-8)", async () => {
  const cases: Case[] = [
    { label: "decode", x: [4, 1024], w: [256, 1024], transB: true, kernel: "gemv" },
    { label: "prefill", x: [64, 512], w: [96, 512], transB: true, kernel: "tiled" },
  ];
  for (const format of ["f16", "bf16"] as const) {
    const u = format === "f16" ? 2 ** -11 : 2 ** -8;
    for (const [i, c] of cases.entries()) {
      const { inputs, values } = caseData(c, format, 200 + 10 * i);
      const [y] = await runOps(
        inputs,
        (x, w) => halfMatmul(x, w, { format, transB: true, kernel: c.kernel }),
      );
      const exact = product(c, inputs[0].data, values);
      const scale = product(c, inputs[0].data.map(Math.abs), values.map(Math.abs));
      let worst = 0;
      y.forEach((v, j) => (worst = Math.max(worst, Math.abs(v - exact[j]) / scale[j])));
      assert(
        worst <= u * (1 + 1e-3),
        `${format} ${c.label}: error ${worst} of sum|x w|, bound ${u}`,
      );
      assert(worst > u / 64, `${format} ${c.label}: error ${worst}: the weights were not rounded`);
      console.log(
        `halfMatmul ${format} ${c.label}: worst |y - y_f32| / sum|x w| = ${worst.toExponential(2)}`,
      );
    }
  }
});

Deno.test("halfMatmul: backward in x matches finite differences (both layouts)", async () => {
  for (const [i, c] of [CASES[1], CASES[4]].entries()) {
    const { inputs, rounded } = caseData(c, "f16", 300 + 10 * i);
    await checkGradients({
      label: c.label,
      inputs,
      wrt: [0],
      build: (x, w) => halfMatmul(x, w, { format: "f16", transB: c.transB }),
      reference: (x) => product(c, x, rounded),
    });
  }
});

Deno.test("halfMatmul refuses mismatched operands and kernels that cannot run, by name", async () => {
  const gpu = await getGpu();
  const g = new Graph();
  const w = g.input([12, 18], "u32", "w");
  assertThrows(
    () => halfMatmul(g.input([2, 35]), w, { format: "f16", transB: true }),
    Error,
    "expected activations with K = 36 columns (the weight holds [12, 36] halves)",
  );
  assertThrows(
    () => halfMatmul(g.input([2, 36]), g.input([12, 18], "f32"), { format: "f16", transB: true }),
    Error,
    "expected a weight of halves packed two per u32",
  );
  assertThrows(
    () => halfMatmul(g.input([2, 36]), g.input([13, 18], "u32"), { format: "f16", transB: true }),
    Error,
    "expected both dims of the weight multiples of 4 (as every model's are",
  );
  assertEquals(
    gemvMisfit(gpu, { m: GEMV_MAX_ROWS + 1, n: 4, k: 8, format: "f16" }, { cols: 4 }),
    "expected at most 8 rows, received 9",
  );
  assertEquals(
    gemvMisfit(gpu, { m: 1, n: 4, k: 12, format: "bf16" }, { cols: 4 }),
    "expected K a multiple of 8 for bf16 weights, received 12",
  );
  const c = CASES[4];
  const { inputs } = caseData(c, "f16", 400);
  await assertRejects(
    () => runOps(inputs, (x, wt) => halfMatmul(x, wt, { format: "f16", kernel: "gemv" })),
    Error,
    'Cannot run "half_matmul" with the gemv kernels: expected the weight used transposed',
  );
});
