/**
 * Softmax and log-softmax over the last axis: forward against the f64 CPU reference on short,
 * long (vocabulary-sized) and many rows, extreme logits, and backward against finite
 * differences (small shapes) and the analytic gradient (long rows).
 */

import { grad } from "../../src/graph/autodiff.ts";
import { Graph } from "../../src/graph/graph.ts";
import type { Tensor } from "../../src/graph/tensor.ts";
import { mul } from "../../src/ops/binary.ts";
import { sumLast } from "../../src/ops/reduce.ts";
import { logSoftmax, softmax } from "../../src/ops/softmax.ts";
import {
  logSoftmaxGradRef,
  logSoftmaxRef,
  softmaxGradRef,
  softmaxRef,
} from "../../src/reference/softmax.ts";
import { uniformArray } from "../../src/util/random.ts";
import { assertClose } from "../_assert_close.ts";
import { assertThrows } from "../_asserts.ts";
import { checkGradients, randomInput, runOps } from "../_harness.ts";

interface Variant {
  name: string;
  op: (x: Tensor) => Tensor;
  ref: (x: ArrayLike<number>, cols: number) => Float64Array;
  gradRef: (x: ArrayLike<number>, cols: number, g: ArrayLike<number>) => Float64Array;
}

const VARIANTS: Variant[] = [
  { name: "softmax", op: softmax, ref: softmaxRef, gradRef: softmaxGradRef },
  { name: "logSoftmax", op: logSoftmax, ref: logSoftmaxRef, gradRef: logSoftmaxGradRef },
];

// Tolerance for outputs: log-softmax values reach ~-160 for +-80 logits, softmax values are tiny.
const TOL = { atol: 2e-6, rtol: 1e-5 };

const SHAPES = [
  [7, 37],
  [3, 5, 1], // one column: softmax 1, log-softmax 0
  [4, 3],
  [2, 7],
  [2, 300], // rows longer than the workgroup
  [1, 5003],
  [300, 7], // more rows than threads in a workgroup
  [2, 50000], // vocabulary-sized rows
];

/** Gradient-check inputs: small shapes (finite differences cost O(size^2)), and wide logits. */
const GRAD_CASES = [
  { shape: [3, 5, 7], lo: -3, hi: 3 },
  { shape: [4, 1], lo: -3, hi: 3 },
  { shape: [2, 300], lo: -3, hi: 3 },
  { shape: [2, 9], lo: -20, hi: 20 },
];

for (const v of VARIANTS) {
  Deno.test(`${v.name}: forward matches CPU on short, long and many rows`, async () => {
    for (const [i, shape] of SHAPES.entries()) {
      const x = randomInput(shape, 100 + i, -4, 4);
      const [y] = await runOps([x], v.op);
      const cols = shape[shape.length - 1];
      assertClose(y, v.ref(x.data, cols), { label: `${v.name} ${shape}`, ...TOL });
    }
  });

  Deno.test(`${v.name}: extreme logits stay finite and match CPU`, async () => {
    const data = Float32Array.from([
      ...[80, -80, 0, 80, -80, 79.5, -79.5], // large positive and negative
      ...[3.25, 3.25, 3.25, 3.25, 3.25, 3.25, 3.25], // equal values: 1/7 each
      ...[1000, 999, 0, -1000, -1000, 998, 1000], // exp would overflow without the max shift
      ...[-80, -80, -80, -80, -80, -80, -90], // all very negative
    ]);
    const [y] = await runOps([{ shape: [4, 7], data }], v.op);
    if (!y.every(Number.isFinite)) throw new Error(`${v.name}: non-finite output ${y}`);
    assertClose(y, v.ref(data, 7), { label: `${v.name} extreme`, ...TOL });
  });

  Deno.test(`${v.name}: backward matches finite differences`, async () => {
    for (const { shape, lo, hi } of GRAD_CASES) {
      const cols = shape[shape.length - 1];
      await checkGradients({
        label: `${v.name} ${shape} in [${lo},${hi})`,
        inputs: [randomInput(shape, 120, lo, hi)],
        build: v.op,
        reference: (t) => v.ref(t, cols),
      });
    }
  });

  Deno.test(`${v.name}: backward on 50000-column rows matches the analytic gradient`, async () => {
    const shape = [2, 50000];
    const x = randomInput(shape, 130, -6, 6);
    const seed = uniformArray(x.data.length, 131);
    const [dx] = await runOps([x], (t) => grad(v.op(t), [t], t.graph.constant(seed, shape)));
    assertClose(dx, v.gradRef(x.data, 50000, seed), {
      label: `${v.name} gradient ${shape}`,
      atol: 1e-6,
      rtol: 1e-4,
    });
  });
}

Deno.test("softmax over more than 65535 rows uses the 2-D workgroup grid", async () => {
  const shape = [70001, 3];
  const x = randomInput(shape, 140, -4, 4);
  const [y, l] = await runOps([x], (t) => [softmax(t), logSoftmax(t)]);
  assertClose(y, softmaxRef(x.data, 3), { label: "softmax [70001,3]", ...TOL });
  assertClose(l, logSoftmaxRef(x.data, 3), { label: "logSoftmax [70001,3]", ...TOL });
});

Deno.test("softmax composes with reductions: sum(softmax(x) * x) differentiates", async () => {
  const shape = [3, 11];
  await checkGradients({
    label: "sumLast(softmax(x) * x)",
    inputs: [randomInput(shape, 150, -2, 2)],
    build: (t) => sumLast(mul(softmax(t), t)),
    reference: (t) => {
      const y = softmaxRef(t, 11);
      const out = new Float64Array(3);
      y.forEach((p, i) => out[Math.floor(i / 11)] += p * t[i]);
      return out;
    },
  });
});

Deno.test("softmax ops reject non-f32 and rank-0 inputs, naming the op", () => {
  const g = new Graph();
  assertThrows(() => logSoftmax(g.input([2, 3], "u32", "ids")), Error, '"log_softmax" to ids');
  assertThrows(() => softmax(g.input([], "f32", "s")), Error, "rank >= 1");
});
