/**
 * RMSNorm and LayerNorm over the last axis: forward against the f64 CPU references on odd
 * shapes (rows of 1, 37 and 300 columns, more rows than a workgroup has threads, a 2-D
 * workgroup grid, Qwen3's per-head q/k norm shape, rows of a multiple of 4 columns, which a CPU
 * adapter walks one invocation per row), large, tiny and offset magnitudes, Gemma's RMSNorm
 * scaling by 1 + weight, and
 * backward for every input against finite differences of the references.
 */

import { Graph } from "../../src/graph/graph.ts";
import type { Tensor } from "../../src/graph/tensor.ts";
import { layerNorm } from "../../src/ops/layernorm.ts";
import { rmsNorm } from "../../src/ops/rmsnorm.ts";
import { layerNormRef, rmsNormRef } from "../../src/reference/layernorm.ts";
import { assertClose } from "../_assert_close.ts";
import { assertThrows } from "../_asserts.ts";
import { checkGradients, randomInput, runOps, type TestInput } from "../_harness.ts";

interface Variant {
  name: string;
  eps: number;
  /** The op on (x, weight[, bias]). */
  op: (eps: number) => (...xs: Tensor[]) => Tensor;
  /** Its f64 reference on (x, weight[, bias]) read as [rows, cols]. */
  ref: (eps: number, cols: number) => (...xs: ArrayLike<number>[]) => Float64Array;
  /** The per-column parameters: weight, and bias for LayerNorm. */
  params: (cols: number, seed: number) => TestInput[];
}

const VARIANTS: Variant[] = [
  {
    name: "rmsNorm",
    eps: 1e-6,
    op: (eps) => (x, w) => rmsNorm(x, w, eps),
    ref: (eps, cols) => (x, w) => rmsNormRef(x, w, cols, eps),
    params: (cols, seed) => [randomInput([cols], seed, 0.5, 1.5)],
  },
  {
    // Gemma's RMSNorm: weights stored around 0, scaling by 1 + weight.
    name: "rmsNorm with weight offset 1",
    eps: 1e-6,
    op: (eps) => (x, w) => rmsNorm(x, w, eps, 1),
    ref: (eps, cols) => (x, w) => rmsNormRef(x, w, cols, eps, 1),
    params: (cols, seed) => [randomInput([cols], seed, -0.5, 0.5)],
  },
  {
    name: "layerNorm",
    eps: 1e-5,
    op: (eps) => (x, w, b) => layerNorm(x, w, b, eps),
    ref: (eps, cols) => (x, w, b) => layerNormRef(x, w, b, cols, eps),
    params: (cols, seed) => [randomInput([cols], seed, 0.5, 1.5), randomInput([cols], seed + 1)],
  },
];

const TOL = { atol: 1e-5, rtol: 1e-5 };

const SHAPES = [
  [7, 37], // odd row length, shorter than a workgroup
  [3, 5, 1], // rows of one element: LayerNorm gives the bias
  [2, 300], // rows longer than the 256-wide workgroup
  [300, 7], // more rows than threads in a workgroup
  [2, 3, 4, 10], // Qwen3 q/k norm: [batch, seq, heads, head_dim] with a [head_dim] weight
  [6], // rank 1: one row
  // Rows of a multiple of 4 columns: on a CPU adapter one invocation per row (forward_rows).
  [13, 36], // 13 rows: a partial workgroup of rows
  [3, 5, 8],
];

/** Runs variant `v` on x (shape, data) with fresh parameters and compares with its reference. */
async function checkForward(v: Variant, x: TestInput, tol: typeof TOL, label: string) {
  const cols = x.shape[x.shape.length - 1];
  const inputs = [x, ...v.params(cols, 7)];
  const [y] = await runOps(inputs, v.op(v.eps));
  assertClose(y, v.ref(v.eps, cols)(...inputs.map((i) => i.data)), { label, ...tol });
}

for (const v of VARIANTS) {
  Deno.test(`${v.name}: forward matches CPU on odd shapes`, async () => {
    for (const [i, shape] of SHAPES.entries()) {
      await checkForward(v, randomInput(shape, 10 + i, -3, 3), TOL, `${v.name} ${shape}`);
    }
  });

  Deno.test(`${v.name}: forward over 70001 rows uses the 2-D workgroup grid`, async () => {
    // Among 70001 three-element rows a few have a variance below eps: there LayerNorm's rstd
    // (up to 1 / sqrt(eps) ~ 316) amplifies the f32 rounding of x - mean (a few ulp(3) ~ 2.4e-7)
    // times the weight (<= 1.5), as it does in torch: up to ~3e-4. llvmpipe stays under 1e-4,
    // an H100 (FMA contraction) reached 1.3e-4.
    const tol = { atol: 3e-4, rtol: 1e-5 };
    await checkForward(v, randomInput([70001, 3], 20, -3, 3), tol, `${v.name} [70001,3]`);
  });

  Deno.test(`${v.name}: large, tiny and offset magnitudes match CPU`, async () => {
    // Outputs are O(1) whatever the scale: a relative error of a few f32 ulps is expected.
    for (const scale of [3e4, 1e15]) {
      for (const cols of [37, 36]) {
        const x = randomInput([5, cols], 30, -scale, scale);
        await checkForward(v, x, TOL, `${v.name} ${cols} columns in [-${scale},${scale})`);
      }
    }
    // mean(x^2) ~ 3e-9 is well below eps: eps must be added where HF adds it.
    await checkForward(v, randomInput([5, 37], 31, -1e-4, 1e-4), TOL, `${v.name} tiny`);
    // A row mean of 100: x - mean carries an f32 rounding of ~ulp(100) = 8e-6 (as in torch).
    const offset = randomInput([5, 37], 32, 99, 101);
    await checkForward(v, offset, { atol: 5e-5, rtol: 1e-5 }, `${v.name} offset`);
  });

  Deno.test(`${v.name}: backward matches finite differences for every input`, async () => {
    const cases = [
      { shape: [3, 5, 7], lo: -2, hi: 2 },
      { shape: [4, 1], lo: -2, hi: 2 },
      { shape: [2, 300], lo: -2, hi: 2 },
      { shape: [300, 3], lo: -2, hi: 2 }, // weight gradient summed over 300 rows
      { shape: [2, 3, 2, 10], lo: -2, hi: 2 }, // per-head shape
    ];
    for (const [i, { shape, lo, hi }] of cases.entries()) {
      const cols = shape[shape.length - 1];
      await checkGradients({
        label: `${v.name} ${shape}`,
        inputs: [randomInput(shape, 40 + i, lo, hi), ...v.params(cols, 50 + i)],
        build: v.op(v.eps),
        reference: v.ref(v.eps, cols),
      });
    }
  });

  Deno.test(`${v.name}: backward at large magnitude matches finite differences`, async () => {
    // dx scales as 1 / |x|: compare relative to ~1e-3-sized gradients.
    const shape = [4, 9];
    await checkGradients({
      label: `${v.name} ${shape} in [-1000,1000)`,
      inputs: [randomInput(shape, 60, -1000, 1000), ...v.params(9, 61)],
      build: v.op(v.eps),
      reference: v.ref(v.eps, 9),
      atol: 1e-7,
      rtol: 1e-3,
    });
  });
}

Deno.test("norm ops reject bad inputs, naming the op and what they expected", () => {
  const g = new Graph();
  const x = g.input([2, 3], "f32", "x");
  const w = g.input([3], "f32", "w");
  assertThrows(
    () => rmsNorm(x, g.input([4], "f32", "w4"), 1e-6),
    Error,
    '"rms_norm" to x[2,3]:f32: expected an f32 weight of shape [3], received w4[4]:f32',
  );
  assertThrows(
    () => layerNorm(x, w, g.input([3], "i32", "bi"), 1e-5),
    Error,
    '"layer_norm" to x[2,3]:f32: expected an f32 bias of shape [3], received bi[3]:i32',
  );
  assertThrows(() => rmsNorm(g.input([2, 3], "u32", "ids"), w, 1e-6), Error, "rank >= 1");
  assertThrows(
    () => rmsNorm(x, w, -1),
    Error,
    "expected a finite eps >= 0 and weight offset, received -1 and 0",
  );
  assertThrows(() => rmsNorm(x, w, 1e-6, Infinity), Error, "received 0.000001 and Infinity");
  assertThrows(() => layerNorm(x, w, w, NaN), Error, "received NaN");
});
