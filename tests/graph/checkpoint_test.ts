/**
 * Checkpointed regions (recomputation): gradients of a stack of layers, each a region, equal the
 * stored graph's (weights, input, a weight shared by every layer), also through a gradient sink;
 * the replay runs after the region's gradient exists, so the compiled graph holds fewer bytes;
 * regions that update in place or nest are refused.
 */

import { assertEquals, assertThrows } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { grad } from "../../src/graph/autodiff.ts";
import { checkpoint } from "../../src/graph/checkpoint.ts";
import { compileGraph } from "../../src/graph/executable.ts";
import { Graph } from "../../src/graph/graph.ts";
import type { GradientSink } from "../../src/graph/op.ts";
import type { Tensor } from "../../src/graph/tensor.ts";
import { add, mul } from "../../src/ops/binary.ts";
import { matmul, matmulAccumulate } from "../../src/ops/matmul.ts";
import { sumLast } from "../../src/ops/reduce.ts";
import { rmsNorm } from "../../src/ops/rmsnorm.ts";
import { gelu, tanh } from "../../src/ops/unary.ts";
import { uniformArray } from "../../src/util/random.ts";

const [N, D, F, LAYERS] = [24, 16, 40, 4];

/** The stack's inputs and weights as graph tensors, and their data. */
function stackInputs(g: Graph) {
  const x = g.input([N, D], "f32", "x");
  const shared = g.input([D], "f32", "norm");
  const layers = Array.from({ length: LAYERS }, (_, l) => ({
    up: g.input([D, F], "f32", `up${l}`),
    down: g.input([F, D], "f32", `down${l}`),
  }));
  const data = new Map<Tensor, Float32Array<ArrayBuffer>>([
    [x, uniformArray(N * D, 1, -1, 1)],
    [shared, uniformArray(D, 2, 0.5, 1.5)],
  ]);
  layers.forEach(({ up, down }, l) => {
    data.set(up, uniformArray(D * F, 10 + l, -0.3, 0.3));
    data.set(down, uniformArray(F * D, 20 + l, -0.3, 0.3));
  });
  return { x, shared, layers, data };
}

/** sum(stack(x) * projection) with each layer a region when `recompute`; its gradients. */
function buildStack(g: Graph, recompute: boolean, sink?: GradientSink) {
  const { x, shared, layers, data } = stackInputs(g);
  let h = x;
  for (const { up, down } of layers) {
    const layer = (input: Tensor) => () =>
      add(input, matmul(gelu(matmul(rmsNorm(input, shared, 1e-6), up)), down));
    h = recompute ? checkpoint(g, layer(h)) : layer(h)();
  }
  const projection = g.constant(uniformArray(N * D, 3), [N, D], "projection");
  const loss = sumLast(sumLast(mul(tanh(h), projection)));
  const wrt = [x, shared, ...layers.flatMap(({ up, down }) => [up, down])];
  return { loss, wrt, grads: grad(loss, wrt, undefined, sink), data };
}

/** Runs the stack, stored or recomputed; its loss, gradients and the graph's slot bytes. */
async function runStack(recompute: boolean) {
  const gpu = await getGpu();
  const g = new Graph();
  const { loss, grads, data } = buildStack(g, recompute);
  const exe = await compileGraph(gpu, [loss, ...grads], recompute ? "recomputed" : "stored");
  try {
    await exe.run(data);
    return { values: await exe.read([loss, ...grads]), slotBytes: exe.stats.slotBytes };
  } finally {
    exe.destroy();
  }
}

Deno.test("checkpoint: recomputed gradients equal stored ones, with fewer bytes held", async () => {
  const stored = await runStack(false);
  const recomputed = await runStack(true);
  stored.values.forEach((v, i) =>
    assertClose(recomputed.values[i], v, { atol: 1e-5, rtol: 1e-5, label: `output ${i}` })
  );
  if (!(recomputed.slotBytes < stored.slotBytes)) {
    throw new Error(
      `recomputed graph holds ${recomputed.slotBytes} bytes, stored ${stored.slotBytes}`,
    );
  }
});

Deno.test("checkpoint: a gradient sink takes the regions' weight terms, same sums", async () => {
  const gpu = await getGpu();
  const g = new Graph();
  const sums = new Map<Tensor, Tensor>();
  const sink: GradientSink = {
    takes: (t) => t.name.startsWith("up") || t.name.startsWith("down"),
    add(t, term) {
      const prev = sums.get(t);
      const next = prev ? add(prev, term) : term;
      sums.set(t, next);
      return next;
    },
  };
  const { loss, wrt, grads, data } = buildStack(g, true, sink);
  const outputs = wrt.map((t, i) => sums.get(t) ?? grads[i]);
  assertEquals(sums.size, 2 * LAYERS, "every layer weight's term went to the sink");
  const exe = await compileGraph(gpu, [loss, ...outputs], "sunk");
  try {
    await exe.run(data);
    const values = await exe.read([loss, ...outputs]);
    const stored = await runStack(false);
    stored.values.forEach((v, i) =>
      assertClose(values[i], v, { atol: 1e-5, rtol: 1e-5, label: `output ${i}` })
    );
  } finally {
    exe.destroy();
  }
});

Deno.test("checkpoint: regions that write in place or nest are refused; empty bodies pass", () => {
  const g = new Graph();
  const x = g.input([2, 3]);
  const w = g.input([3, 3]);
  assertThrows(
    () => checkpoint(g, () => matmulAccumulate(add(x, x), x, w)),
    Error,
    "matmul_accumulate",
  );
  assertThrows(
    () => checkpoint(g, () => add(checkpoint(g, () => add(x, x)), x)),
    Error,
    '"checkpoint"',
  );
  assertEquals(checkpoint(g, () => x), x);
});
