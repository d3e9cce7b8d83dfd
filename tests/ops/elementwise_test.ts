import assert from "node:assert/strict";
import { Graph } from "../../src/graph/graph.ts";
import { add, binary, BINARY_OPS, div, mul, sub } from "../../src/ops/binary.ts";
import { expandTo, sumTo } from "../../src/ops/broadcast.ts";
import { gated, type GateKind, swiglu } from "../../src/ops/gated.ts";
import { unary, UNARY_OPS, type UnaryKind } from "../../src/ops/unary.ts";
import {
  binaryRef,
  expandToRef,
  gatedRef,
  sumToRef,
  unaryRef,
} from "../../src/reference/elementwise.ts";
import { assertClose } from "../_assert_close.ts";
import { checkGradients, randomInput, runOps } from "../_harness.ts";

Deno.test("the references broadcast as numpy does, worked out by hand", () => {
  // [2, 1] + [3]: each row of a against all of b.
  const sum = binaryRef("add", [1, 2], [2, 1], [10, 20, 30], [3]);
  assert.deepEqual(sum.shape, [2, 3]);
  assert.deepEqual([...sum.data], [11, 21, 31, 12, 22, 32]);
  // [2, 1, 2] * [3, 1]: a layout of two broadcast blocks, which no (outer, n, inner) describes.
  const product = binaryRef("mul", [1, 2, 3, 4], [2, 1, 2], [1, 10, 100], [3, 1]);
  assert.deepEqual(product.shape, [2, 3, 2]);
  assert.deepEqual([...product.data], [1, 2, 10, 20, 100, 200, 3, 4, 30, 40, 300, 400]);
  const x = [1, 2, 3, 4, 5, 6];
  assert.deepEqual([...sumToRef(x, [2, 3], [3])], [5, 7, 9]);
  assert.deepEqual([...sumToRef(x, [2, 3], [2, 1])], [6, 15]);
  assert.deepEqual([...expandToRef([7, 8], [2, 1], [2, 3])], [7, 7, 7, 8, 8, 8]);
  assert.throws(() => binaryRef("add", [1, 2], [2], [1, 2, 3], [3]), /Cannot broadcast/);
});

// Odd sizes: not multiples of the 256-wide workgroups.
const SHAPE = [7, 37];

/** Input ranges where each function and its derivative are defined and smooth enough. */
function domain(kind: UnaryKind): [number, number] {
  if (kind === "log" || kind === "sqrt") return [0.2, 3];
  if (kind === "relu") return [0.05, 1]; // keep finite differences away from the kink
  return [-3, 3];
}

for (const kind of UNARY_OPS) {
  Deno.test(`unary ${kind}: forward matches CPU and backward matches finite differences`, async () => {
    const [lo, hi] = domain(kind);
    const x = randomInput(SHAPE, 11, lo, hi);
    const alpha = kind === "affine" ? -1.75 : 1;
    const beta = kind === "affine" ? 0.5 : 0;
    const [y] = await runOps([x], (t) => unary(kind, t, alpha, beta));
    assertClose(y, unaryRef(kind, x.data, alpha, beta), { label: kind, atol: 1e-5, rtol: 1e-5 });
    await checkGradients({
      label: kind,
      inputs: [x],
      build: (t) => unary(kind, t, alpha, beta),
      reference: (t) => unaryRef(kind, t, alpha, beta),
    });
  });
}

const GATES: GateKind[] = ["silu", "gelu", "sigmoid", "tanh"];

for (const kind of GATES) {
  Deno.test(`gated ${kind}: f(gate) * up matches CPU, both gradients finite differences`, async () => {
    // 555 elements: one per invocation; 252: four per invocation (vec4 loads).
    for (const shape of [[3, 5, 37], [3, 7, 12]]) {
      const gate = randomInput(shape, 31, -3, 3);
      const up = randomInput(shape, 32, -2, 2);
      const [y] = await runOps([gate, up], (g, u) => gated(kind, g, u));
      const label = `${kind} ${shape}`;
      assertClose(y, gatedRef(kind, gate.data, up.data), { label, atol: 1e-5, rtol: 1e-5 });
      await checkGradients({
        label: `gated ${label}`,
        inputs: [gate, up],
        build: (g, u) => gated(kind, g, u),
        reference: (g, u) => gatedRef(kind, g, u),
      });
    }
  });
}

Deno.test("swiglu equals silu(gate) * up computed by the separate ops", async () => {
  const gate = randomInput([2, 257], 41, -4, 4);
  const up = randomInput([2, 257], 42, -2, 2);
  const [fused, separate] = await runOps(
    [gate, up],
    (g, u) => [swiglu(g, u), mul(unary("silu", g), u)],
  );
  assertClose(fused, separate, { label: "swiglu", atol: 1e-6, rtol: 1e-6 });
});

Deno.test("gated rejects operands of different shapes", () => {
  const g = new Graph();
  assert.throws(
    () => swiglu(g.input([2, 3]), g.input([3, 2])),
    /expected f32 operands of one shape/,
  );
});

Deno.test("relu: gradient is zero for negative inputs", async () => {
  const x = randomInput([3, 5], 4, -2, -0.1);
  await checkGradients({
    label: "relu-negative",
    inputs: [x],
    build: (t) => unary("relu", t),
    reference: (t) => unaryRef("relu", t),
  });
});

const BROADCASTS: [number[], number[]][] = [
  [[5, 13], [5, 13]], // same shape
  [[3, 5, 13], [13]], // bias over rows
  [[3, 5, 13], [5, 1]], // per-row value
  [[1], [4, 9]], // scalar on the left
  [[6, 1, 1], [6, 7, 3]], // leading block
];

for (const kind of BINARY_OPS) {
  for (const [aShape, bShape] of BROADCASTS) {
    Deno.test(`binary ${kind} ${JSON.stringify(aShape)} x ${JSON.stringify(bShape)}`, async () => {
      const a = randomInput(aShape, 21, 0.5, 2);
      const b = randomInput(bShape, 22, 0.5, 2);
      const [y] = await runOps([a, b], (x, z) => binary(kind, x, z));
      const ref = binaryRef(kind, a.data, aShape, b.data, bShape);
      assertClose(y, ref.data, { label: kind, atol: 1e-6, rtol: 1e-6 });
      await checkGradients({
        label: `${kind} ${aShape}x${bShape}`,
        inputs: [a, b],
        build: (x, z) => binary(kind, x, z),
        reference: (x, z) => binaryRef(kind, x, aShape, z, bShape).data,
      });
    });
  }
}

Deno.test("sumTo and expandTo are adjoint and match CPU, over large row counts", async () => {
  const from = [300, 7, 5];
  const x = randomInput(from, 5);
  const [rows, cols] = await runOps([x], (t) => [sumTo(t, [7, 1]), sumTo(t, [5])]);
  assertClose(rows, sumToRef(x.data, from, [7, 1]), { label: "sumTo [7,1]", rtol: 1e-5 });
  assertClose(cols, sumToRef(x.data, from, [5]), { label: "sumTo [5]", rtol: 1e-5 });
  const small = randomInput([7, 1], 6);
  const [big] = await runOps([small], (t) => expandTo(t, from));
  assertClose(big, expandToRef(small.data, [7, 1], from), { label: "expandTo" });
  await checkGradients({
    label: "sumTo",
    inputs: [randomInput([4, 3, 5], 7)],
    build: (t) => sumTo(t, [3, 1]),
    reference: (t) => sumToRef(t, [4, 3, 5], [3, 1]),
  });
});

Deno.test("composite expression differentiates through shared subexpressions", async () => {
  const a = randomInput([4, 6], 31, 0.5, 1.5);
  const b = randomInput([6], 32, 0.5, 1.5);
  const build = (x: Parameters<typeof add>[0], z: Parameters<typeof add>[0]) => {
    const s = add(x, z);
    return div(mul(s, s), sub(s, unary("affine", z, 0, -3)));
  };
  const reference = (x: Float64Array, z: Float64Array) =>
    Float64Array.from(x, (v, i) => {
      const s = v + z[i % 6];
      return (s * s) / (s + 3);
    });
  const [y] = await runOps([a, b], build);
  assertClose(y, reference(Float64Array.from(a.data), Float64Array.from(b.data)), {
    label: "composite",
  });
  await checkGradients({ label: "composite", inputs: [a, b], build, reference });
});
