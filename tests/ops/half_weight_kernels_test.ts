/**
 * The GPUs' kernels for products by weights stored as bf16 / f16 (the matmul variants
 * `tiled_8x8_*`, on 8 x 8 workgroup tiles, and `gemv_*`, the GEMV kernels with lane sums in
 * workgroup memory or, where subgroups work, by subgroup sums), forced on the test adapter,
 * against the f64 product of the rounded weights on odd shapes (rows 1 to 130, N off every tile
 * and workgroup, K from one chunk to 1032, the weight used transposed or not); the backward in x
 * (the product by the same half weight the other way round, on the same kernels) against finite
 * differences; the accuracy bound of the weights' rounding, measured against the f32 weights;
 * what the kernels refuse. The CPU adapters' kernels for half weights: half_weights_test.ts.
 */

import { getGpu } from "../../src/gpu/device.ts";
import { compileGraph } from "../../src/graph/executable.ts";
import { Graph } from "../../src/graph/graph.ts";
import type { Variable } from "../../src/graph/tensor.ts";
import { uploadTensor } from "../../src/model/upload.ts";
import { GEMV_MAX_ROWS, gemvMisfit } from "../../src/ops/gemv.ts";
import { matmul, matmulShapes } from "../../src/ops/matmul.ts";
import { matmulVariant } from "../../src/ops/matmul_variants.ts";
import { matmulRef } from "../../src/reference/matmul.ts";
import { fromBf16, fromF16, toBf16, toF16 } from "../../src/util/half.ts";
import { uniformArray } from "../../src/util/random.ts";
import assert from "node:assert/strict";
import { assertClose } from "../_assert_close.ts";
import { assertEquals } from "../_asserts.ts";
import { checkGradients, runOps } from "../_harness.ts";

type Format = "bf16" | "f16";

interface Case {
  label: string;
  /** x's shape [..., K]. */
  x: number[];
  /** The weight's shape as stored: [N, K] with transB, else [K, N]. */
  w: [number, number];
  transB: boolean;
  /** The matmul variant forced. */
  variant: string;
}

const TILES = "tiled_8x8_64x64";

const CASES: Case[] = [
  { label: "gemv, one row, one chunk of K", x: [1, 8], w: [28, 8], transB: true, variant: "gemv" },
  {
    label: "gemv, 6 rows in two dims, N=132",
    x: [3, 2, 40],
    w: [132, 40],
    transB: true,
    variant: "gemv",
  },
  { label: "gemv, 8 rows, K=1032", x: [8, 1032], w: [12, 1032], transB: true, variant: "gemv" },
  { label: "tiles, x W^T, odd M", x: [37, 52], w: [28, 52], transB: true, variant: TILES },
  { label: "tiles, x W", x: [37, 52], w: [52, 28], transB: false, variant: TILES },
  {
    label: "tiles 128, 130 rows",
    x: [130, 64],
    w: [68, 64],
    transB: true,
    variant: "tiled_8x8_128x128",
  },
  { label: "tiles, one row", x: [1, 36], w: [12, 36], transB: true, variant: TILES },
];

/** `values` rounded to `format` and back: what a weight stored in it holds. */
function rounded(values: Float32Array, format: Format): Float32Array {
  return format === "bf16" ? fromBf16(toBf16(values)) : fromF16(toF16(values));
}

/** A variable of `shape` holding `values` stored as `format`. */
async function halfWeight(shape: number[], values: Float32Array<ArrayBuffer>, format: Format) {
  const bytes = new Uint8Array(values.buffer);
  return await uploadTensor(await getGpu(), { name: "w", dtype: "F32", shape, bytes }, {
    storeAs: format,
  });
}

/** The variant to force for `c`: the GEMV one with subgroup sums where they work. */
async function variantOf(c: Case): Promise<string> {
  if (c.variant !== "gemv") return c.variant;
  return (await getGpu()).hasSubgroups ? "gemv_sg_c4" : "gemv_c4";
}

/** The f64 product of x by weight values `w` stored as `c` says. */
function product(c: Case, x: ArrayLike<number>, w: ArrayLike<number>): Float64Array {
  return matmulRef(x, w, matmulShapes(c.x, c.w, { transB: c.transB }));
}

/** `c`'s x, the weight's f32 values, and the weight stored as `format`. */
async function caseData(c: Case, format: Format, seed: number) {
  const x = uniformArray(c.x.reduce((a, b) => a * b, 1), seed);
  const values = uniformArray(c.w[0] * c.w[1], seed + 1);
  return { x, values, weight: await halfWeight(c.w, values, format) };
}

/** `build(x, w)` run once on `x` with the weight variable `weight`. */
async function runWith(c: Case, x: Float32Array<ArrayBuffer>, weight: Variable) {
  const variant = await variantOf(c);
  const [y] = await runOps(
    [{ shape: c.x, data: x }],
    (xt) => matmul(xt, xt.graph.variable(weight), { transB: c.transB, variant }),
  );
  return y;
}

for (const format of ["f16", "bf16"] as const) {
  Deno.test(`half weights ${format}: GEMV and tile kernels match the rounded weights' product`, async () => {
    for (const [i, c] of CASES.entries()) {
      const { x, values, weight } = await caseData(c, format, 100 + 10 * i);
      try {
        const y = await runWith(c, x, weight);
        const k = c.x[c.x.length - 1];
        // f32 sums of k products of values in [-1, 1].
        assertClose(y, product(c, x, rounded(values, format)), {
          atol: 2e-7 * k + 1e-6,
          rtol: 1e-5,
          label: `${format} ${c.label} (${await variantOf(c)})`,
        });
      } finally {
        weight.buffer.destroy();
      }
    }
  });
}

Deno.test("half weights: the GEMV kernels without subgroups match too", async () => {
  const gpu = { ...(await getGpu()), hasSubgroups: false };
  const c = CASES[2];
  const { x: data, values, weight } = await caseData(c, "bf16", 150);
  const g = new Graph();
  const x = g.input(c.x);
  const y = matmul(x, g.variable(weight), { transB: true, variant: "gemv_c4" });
  const exe = await compileGraph(gpu, [y], "half gemv without subgroups");
  try {
    assert(exe.dispatches[0].label.startsWith("gemv:"), exe.dispatches[0].label);
    await exe.run(new Map([[x, data]]));
    const [got] = await exe.read([y]);
    assertClose(got, product(c, data, rounded(values, "bf16")), { atol: 3e-4, rtol: 1e-5 });
  } finally {
    exe.destroy();
    weight.buffer.destroy();
  }
});

Deno.test("half weights: backward in x on the tiles matches finite differences (both layouts)", async () => {
  for (const [i, c] of [CASES[3], CASES[4]].entries()) {
    const small = { ...c, x: [5, c.x[1]] };
    const { x, values, weight } = await caseData(small, "f16", 300 + 10 * i);
    try {
      await checkGradients({
        label: c.label,
        inputs: [{ shape: small.x, data: x }],
        build: (xt) => matmul(xt, xt.graph.variable(weight), { transB: c.transB, variant: TILES }),
        reference: (xs) => product(small, xs, rounded(values, "f16")),
      });
    } finally {
      weight.buffer.destroy();
    }
  }
});

/**
 * Rounding the weights to `format` moves each product x_k w_k by at most u |x_k w_k| (u: the unit
 * roundoff, 2^-11 for f16, 2^-8 for bf16), so |y - y_f32| <= u sum_k |x_k w_k|; the f32 sums add
 * ~K 2^-24 of the same scale. Checked on a decode-sized product and a prefill-sized one; the
 * measured worst ratio is printed for bench/README.
 */
Deno.test("half weights: the weights' rounding bounds the error (f16 2^-11, bf16 2^-8)", async () => {
  const cases: Case[] = [
    { label: "decode", x: [4, 1024], w: [256, 1024], transB: true, variant: "gemv" },
    { label: "prefill", x: [64, 512], w: [96, 512], transB: true, variant: TILES },
  ];
  for (const format of ["f16", "bf16"] as const) {
    const u = format === "f16" ? 2 ** -11 : 2 ** -8;
    for (const [i, c] of cases.entries()) {
      const { x, values, weight } = await caseData(c, format, 200 + 10 * i);
      const y = await runWith(c, x, weight).finally(() => weight.buffer.destroy());
      const exact = product(c, x, values);
      const scale = product(c, x.map(Math.abs), values.map(Math.abs));
      let worst = 0;
      y.forEach((v, j) => (worst = Math.max(worst, Math.abs(v - exact[j]) / scale[j])));
      assert(
        worst <= u * (1 + 1e-3),
        `${format} ${c.label}: error ${worst} of sum|x w|, bound ${u}`,
      );
      assert(worst > u / 64, `${format} ${c.label}: error ${worst}: the weights were not rounded`);
      console.log(`${format} ${c.label}: worst |y - y_f32| / sum|x w| = ${worst.toExponential(2)}`);
    }
  }
});

Deno.test("half weights: what the GPU kernels refuse, by name", async () => {
  const gpu = await getGpu();
  assertEquals(
    gemvMisfit(gpu, { m: GEMV_MAX_ROWS + 1, n: 4, k: 8, format: "f16" }, { cols: 4 }),
    "expected at most 8 rows, received 9",
  );
  assertEquals(
    gemvMisfit(gpu, { m: 1, n: 4, k: 12, format: "bf16" }, { cols: 4 }),
    "expected K a multiple of 8 for bf16 weights, received 12",
  );
  const problem = {
    batch: 1,
    m: 8,
    n: 12,
    k: 38,
    transA: false,
    transB: true,
    strideA: 8 * 38,
    strideB: 0,
    strideC: 8 * 12,
    bFormat: "f16" as const,
  };
  assertEquals(matmulVariant(TILES).misfit(gpu, { ...problem, k: 36 }), undefined);
  assert(matmulVariant(TILES).misfit(gpu, problem)?.includes("multiple of 4"));
  assertEquals(
    matmulVariant("tiled_vec4_64x64").misfit(gpu, problem),
    "expected an f32 B, received f16",
  );
});
