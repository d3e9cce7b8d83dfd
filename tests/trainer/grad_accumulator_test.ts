/**
 * GradAccumulator (`shaders/gradient_sum.wgsl` in place) against the CPU reference: gradients of odd
 * sizes (one above a workgroup of 256) summed over three runs equal the f64 sum of the three
 * micro-batches' gradients, and `reset` zeroes the sums on the GPU; a weight gradient that is a
 * matmul's product is summed by the matmul itself (one dispatch), a tied embedding's (LM head +
 * lookup) by the matmul and the lookup's scatter.
 */

import { assertEquals } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { grad } from "../../src/graph/autodiff.ts";
import { compileGraph, type Executable } from "../../src/graph/executable.ts";
import { gradientSum } from "../../src/graph/gradient_sum.ts";
import { Graph } from "../../src/graph/graph.ts";
import { type HostData, shapeSize, type Tensor, type Variable } from "../../src/graph/tensor.ts";
import { embedding } from "../../src/ops/embedding.ts";
import { matmul, matmulShapes } from "../../src/ops/matmul.ts";
import { embeddingGradRef } from "../../src/reference/embedding.ts";
import { binaryRef } from "../../src/reference/elementwise.ts";
import { matmulRef } from "../../src/reference/matmul.ts";
import { zeroVariable } from "../../src/trainer/adamw.ts";
import { GradAccumulator } from "../../src/trainer/grad_accumulator.ts";
import { uniformArray } from "../../src/util/random.ts";

const SHAPES: readonly (readonly number[])[] = [[3, 7], [257]];

/** `grads` (one per parameter of `params`, made in `g`) handed to `acc`'s sink as gradient terms. */
function accumulate(
  acc: GradAccumulator,
  g: Graph,
  params: readonly Variable[],
  grads: readonly Tensor[],
): Tensor[] {
  const sink = acc.sink(params.map((p) => g.variable(p)));
  params.forEach((p, i) => sink.add(g.variable(p), grads[i]));
  return sink.results();
}

Deno.test("GradAccumulator sums micro-batch gradients of odd sizes and resets to zero", async () => {
  const gpu = await getGpu();
  const params = SHAPES.map((shape, i) => zeroVariable(gpu, `p${i}`, shape));
  const acc = new GradAccumulator(gpu, params);
  const g = new Graph();
  const grads = SHAPES.map((shape, i) => g.input(shape, "f32", `grad${i}`));
  const sums = accumulate(acc, g, params, grads);
  const exe = await compileGraph(gpu, sums, "accumulate_test");
  try {
    let expected: ArrayLike<number>[] = SHAPES.map((shape) => new Float64Array(shapeSize(shape)));
    for (let run = 0; run < 3; run++) {
      const data = SHAPES.map((shape, i) => uniformArray(shapeSize(shape), 10 * run + i, -2, 2));
      await exe.run(new Map(grads.map((t, i) => [t, data[i]])));
      expected = SHAPES.map((shape, i) =>
        binaryRef("add", expected[i], shape, data[i], shape).data
      );
    }
    const got = await exe.read(sums);
    SHAPES.forEach((_, i) =>
      assertClose(got[i], expected[i], { atol: 1e-6, rtol: 1e-6, label: `sum ${i}` })
    );
    acc.reset();
    const cleared = await exe.read(sums);
    assertEquals(cleared.map((c) => Array.from(c).every((x) => x === 0)), [true, true]);
  } finally {
    exe.destroy();
    acc.destroy();
    params.forEach((p) => p.buffer.destroy());
  }
});

/**
 * One accumulator over a zero parameter of `shape`: `build` makes the gradient in a new graph, the
 * graph of the accumulated sum is compiled and handed to `check` with that sum; all freed after.
 */
async function withAccumulatedGradient(
  shape: readonly number[],
  build: (g: Graph) => Tensor,
  check: (exe: Executable, sum: Tensor) => Promise<void>,
): Promise<void> {
  const gpu = await getGpu();
  const param = zeroVariable(gpu, "param", shape);
  const acc = new GradAccumulator(gpu, [param]);
  const g = new Graph();
  const [sum] = accumulate(acc, g, [param], [build(g)]);
  const exe = await compileGraph(gpu, [sum], "accumulate_fused_test");
  try {
    await check(exe, sum);
  } finally {
    exe.destroy();
    acc.destroy();
    param.buffer.destroy();
  }
}

Deno.test("GradAccumulator adds a weight gradient (a matmul's product) in the matmul's own stores", async () => {
  const [rows, m, n] = [9, 5, 7];
  let x!: Tensor, dy!: Tensor;
  await withAccumulatedGradient([m, n], (g) => {
    x = g.input([rows, m], "f32", "x");
    dy = g.input([rows, n], "f32", "dy");
    return matmul(x, dy, { transA: true });
  }, async (exe, sum) => {
    assertEquals(exe.stats.dispatches, 1); // the matmul alone, no gradient_sum pass
    const expected = new Float64Array(m * n);
    for (let run = 0; run < 3; run++) {
      const xs = uniformArray(rows * m, 40 + run, -2, 2);
      const dys = uniformArray(rows * n, 50 + run, -2, 2);
      await exe.run(new Map([[x, xs], [dy, dys]]));
      const product = matmulRef(xs, dys, matmulShapes([rows, m], [rows, n], { transA: true }));
      product.forEach((v, i) => expected[i] += v);
    }
    const [got] = await exe.read([sum]);
    assertClose(got, expected, { atol: 1e-5, rtol: 1e-5, label: "sum of x^T dy" });
  });
});

Deno.test("GradAccumulator adds a tied embedding's two gradient terms in their own launches", async () => {
  const [vocab, dim, tokens] = [11, 6, 7];
  let ids!: Tensor, seed!: Tensor, hidden!: Tensor, dLogits!: Tensor;
  await withAccumulatedGradient([vocab, dim], (g) => {
    const table = g.input([vocab, dim], "f32", "table");
    ids = g.input([tokens], "i32", "ids");
    seed = g.input([tokens, dim], "f32", "seed");
    hidden = g.input([tokens, dim], "f32", "hidden");
    dLogits = g.input([tokens, vocab], "f32", "dlogits");
    const [lookup] = grad(embedding(table, ids), [table], seed);
    return gradientSum(matmul(dLogits, hidden, { transA: true }), lookup);
  }, async (exe, sum) => {
    // matmul_accumulate and embedding_backward_accumulate: no sum of the two, no gradient_sum.
    assertEquals(exe.stats.dispatches, 2);
    const expected = new Float64Array(vocab * dim);
    for (let run = 0; run < 3; run++) {
      const idv = Int32Array.from({ length: tokens }, (_, t) => (3 * t + run) % 5); // ids 5.. unused
      const feeds = {
        seed: uniformArray(tokens * dim, 60 + run, -2, 2),
        hidden: uniformArray(tokens * dim, 70 + run, -2, 2),
        dLogits: uniformArray(tokens * vocab, 80 + run, -2, 2),
      };
      await exe.run(
        new Map<Tensor, HostData>([
          [ids, idv],
          [seed, feeds.seed],
          [hidden, feeds.hidden],
          [dLogits, feeds.dLogits],
        ]),
      );
      const product = matmulRef(
        feeds.dLogits,
        feeds.hidden,
        matmulShapes([tokens, vocab], [tokens, dim], { transA: true }),
      );
      const scattered = embeddingGradRef(feeds.seed, dim, idv, vocab);
      product.forEach((v, i) => expected[i] += v + scattered[i]);
    }
    const [got] = await exe.read([sum]);
    assertClose(got, expected, { atol: 1e-5, rtol: 1e-5, label: "head + lookup gradients" });
  });
});
