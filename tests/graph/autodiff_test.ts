import { assertEquals, assertThrows } from "../_asserts.ts";
import { grad } from "../../src/graph/autodiff.ts";
import { Graph } from "../../src/graph/graph.ts";
import type { OpDef } from "../../src/graph/op.ts";
import { add, mul } from "../../src/ops/binary.ts";
import { matmul } from "../../src/ops/matmul.ts";
import { logSoftmax, softmax } from "../../src/ops/softmax.ts";
import { sumLast } from "../../src/ops/reduce.ts";
import { exp } from "../../src/ops/unary.ts";
import { checkGradients, randomInput, runOps } from "../_harness.ts";
import { assertClose } from "../_assert_close.ts";

const [R, K, C] = [5, 6, 9];

/** f64 reference of sum_last(softmax(x @ w + b) * x2) with x2 = logSoftmax(x @ w + b). */
function reference(x: Float64Array, w: Float64Array, b: Float64Array): Float64Array {
  const out = new Float64Array(R);
  for (let r = 0; r < R; r++) {
    const z = Array.from({ length: C }, (_, c) => {
      let s = b[c];
      for (let k = 0; k < K; k++) s += x[r * K + k] * w[k * C + c];
      return s;
    });
    const m = Math.max(...z);
    const lse = m + Math.log(z.reduce((s, v) => s + Math.exp(v - m), 0));
    for (let c = 0; c < C; c++) out[r] += Math.exp(z[c] - lse) * (z[c] - lse);
  }
  return out;
}

const build = (x: Parameters<typeof matmul>[0], w: typeof x, b: typeof x) => {
  const z = add(matmul(x, w), b);
  // z feeds two branches, so autodiff must sum their gradients.
  return sumLast(mul(softmax(z), logSoftmax(z)));
};

Deno.test("matmul -> add -> softmax/log-softmax -> sum: forward and autodiff match f64 finite differences", async () => {
  const inputs = [randomInput([R, K], 1), randomInput([K, C], 2), randomInput([C], 3)];
  const [y] = await runOps(inputs, build);
  assertClose(
    y,
    reference(
      ...inputs.map((i) => Float64Array.from(i.data)) as [Float64Array, Float64Array, Float64Array],
    ),
    { label: "forward" },
  );
  await checkGradients({
    label: "matmul-add-softmax-sum",
    inputs,
    build,
    reference: (x, w, b) => reference(x, w, b),
  });
});

Deno.test("gradients of a reused tensor accumulate (d/dx of x*x + exp(x) is 2x + exp(x))", async () => {
  const x = randomInput([3, 4], 8);
  const [dx] = await runOps([x], (t) => grad(add(mul(t, t), exp(t)), [t]));
  assertClose(dx, Array.from(x.data, (v) => 2 * v + Math.exp(v)), { label: "accumulated" });
});

Deno.test("a tensor the output does not depend on gets a zero gradient", async () => {
  const a = randomInput([4], 1);
  const b = randomInput([4], 2);
  const [, db] = await runOps([a, b], (x, z) => {
    const grads = grad(exp(x), [x, z]);
    return [exp(x), grads[1]];
  });
  assertEquals(Array.from(db), [0, 0, 0, 0]);
});

Deno.test("differentiating through an op without backward names the op", () => {
  const opaque: OpDef<null> = {
    name: "opaque",
    output: ([x]) => ({ shape: x.shape, dtype: "f32" }),
    launch: () => [],
  };
  const g = new Graph();
  const x = g.input([3]);
  const y = exp(g.apply(opaque, [exp(x)], null));
  assertThrows(() => grad(y, [x]), Error, 'Cannot differentiate through op "opaque"');
});
