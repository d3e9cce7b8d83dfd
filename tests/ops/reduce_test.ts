/**
 * Last-axis reductions (sum, mean, max): forward against the f64 CPU reference on odd shapes
 * (short and long rows, many rows, a 2-D workgroup grid), the keepDim option, the max tie
 * convention (gradient to the first argmax only), and backward against finite differences.
 */

import { grad } from "../../src/graph/autodiff.ts";
import { Graph } from "../../src/graph/graph.ts";
import { maxLast, meanLast, REDUCE_OPS, reduceLast, sumLast } from "../../src/ops/reduce.ts";
import { maxLastGradRef, reduceLastRef } from "../../src/reference/reduce.ts";
import { uniformArray } from "../../src/util/random.ts";
import { assertClose } from "../_assert_close.ts";
import { checkGradients, randomInput, runOps } from "../_harness.ts";
import { assertEquals, assertThrows } from "../_asserts.ts";

const SHAPES = [
  [7, 37], // odd row length, smaller than a workgroup
  [3, 5, 1], // rows of one element
  [2, 300], // rows longer than the 256-wide workgroup
  [1, 5003], // one long row
  [300, 7], // more rows than threads in a workgroup
  [5], // rank 1: one row
];

for (const kind of REDUCE_OPS) {
  Deno.test(`${kind}Last: forward matches CPU on odd shapes`, async () => {
    for (const [i, shape] of SHAPES.entries()) {
      const x = randomInput(shape, 40 + i, -2, 3);
      const [y] = await runOps([x], (t) => reduceLast(kind, t));
      const cols = shape[shape.length - 1];
      // max is exact; sums of up to 5003 f32 values carry rounding.
      const tol = kind === "max" ? { atol: 0, rtol: 0 } : { atol: 1e-4, rtol: 1e-5 };
      assertClose(y, reduceLastRef(kind, x.data, cols), { label: `${kind} ${shape}`, ...tol });
    }
  });

  Deno.test(`${kind}Last: backward matches finite differences`, async () => {
    for (const shape of [[3, 5, 7], [2, 300], [4, 1]]) {
      const cols = shape[shape.length - 1];
      await checkGradients({
        label: `${kind} ${shape}`,
        inputs: [randomInput(shape, 50, -2, 2)], // continuous random data: no ties in max
        build: (t) => reduceLast(kind, t),
        reference: (t) => reduceLastRef(kind, t, cols),
      });
    }
  });
}

Deno.test("reductions over more than 65535 rows use the 2-D workgroup grid", async () => {
  const shape = [70001, 3];
  const x = randomInput(shape, 60);
  const outs = await runOps([x], (t) => REDUCE_OPS.map((kind) => reduceLast(kind, t)));
  REDUCE_OPS.forEach((kind, i) => {
    assertClose(outs[i], reduceLastRef(kind, x.data, 3), { label: `${kind} ${shape}` });
  });
});

Deno.test("keepDim: false drops the reduced axis", async () => {
  const x = randomInput([3, 5, 7], 70);
  const v = randomInput([7], 71);
  const g = new Graph();
  const t = g.input(x.shape);
  const u = g.input(v.shape);
  const y = sumLast(t, { keepDim: false });
  const s = meanLast(u, { keepDim: false });
  assertEquals([y.shape, s.shape], [[3, 5], []]);
  const [ys, ss] = await runOps(
    [x, v],
    (a, b) => [sumLast(a, { keepDim: false }), meanLast(b, { keepDim: false })],
  );
  assertClose(ys, reduceLastRef("sum", x.data, 7), { label: "sum keepDim false" });
  assertClose(ss, reduceLastRef("mean", v.data, 7), { label: "mean keepDim false" });
  await checkGradients({
    label: "max keepDim false",
    inputs: [x],
    build: (a) => maxLast(a, { keepDim: false }),
    reference: (a) => reduceLastRef("max", a, 7),
  });
});

Deno.test("maxLast: with ties the gradient goes to the first argmax only", async () => {
  const cols = 600; // > 256 columns: ties across threads and across one thread's strides
  const data = uniformArray(4 * cols, 80, -1, 1);
  const tie = (row: number, value: number, at: number[]) => {
    for (const c of at) data[row * cols + c] = value;
  };
  tie(0, 5, [5, 261, 100, 599]); // first at 5; 261 is thread 5's second stride
  tie(1, 5, [257, 130]); // thread 1 holds 257, thread 130 holds 130: first is 130
  tie(2, 2, [599, 598]); // ties at the end
  data.fill(-3, 3 * cols, 4 * cols); // a row of equal values: first is 0
  const x = { shape: [4, cols], data };
  const seed = Float32Array.from([1.5, -2, 0.25, 3]);
  const [y, dx] = await runOps([x], (t) => {
    const m = maxLast(t);
    return [m, grad(m, [t], t.graph.constant(seed, [4, 1]))[0]];
  });
  assertClose(y, [5, 5, 2, -3], { label: "max with ties", atol: 0, rtol: 0 });
  const expected = maxLastGradRef(data, cols, seed);
  const firsts = [0, 1, 2, 3].map((row) =>
    expected.subarray(row * cols, (row + 1) * cols).findIndex((v) => v !== 0)
  );
  assertEquals(firsts, [5, 130, 598, 0], "maxLastGradRef: first argmax of each row");
  assertClose(dx, expected, { label: "max gradient with ties", atol: 0, rtol: 0 });
});

Deno.test("reductions reject non-f32 and rank-0 inputs, naming the op", () => {
  const g = new Graph();
  assertThrows(() => sumLast(g.input([4, 3], "i32", "ids")), Error, '"sum_last" to ids[4,3]:i32');
  assertThrows(() => maxLast(g.input([], "f32", "s")), Error, "rank >= 1");
});
