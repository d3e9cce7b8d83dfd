// Launch copies of variables (a weight's packed texture in the texture matmuls, a texture copy
// of any other variable): refreshed on every run by default, kept while the caller vouches the
// variables are unchanged (not on a first run), and never kept for a variable the graph itself
// writes in place (a KV cache).

import { assertEquals } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { TENSOR_USAGE } from "../../src/gpu/buffer_pool.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { compileGraph, type Feed } from "../../src/graph/executable.ts";
import { Graph } from "../../src/graph/graph.ts";
import type { Tensor, Variable } from "../../src/graph/tensor.ts";
import { writeKvCache } from "../../src/ops/kv_cache.ts";
import { matmul, matmulAccumulate } from "../../src/ops/matmul.ts";
import { reshape } from "../../src/ops/reshape.ts";
import { matmulRef } from "../../src/reference/matmul.ts";
import { uniformArray } from "../../src/util/random.ts";

const variant = "texture_4x16"; // copies both operands into textures, or packs a constant B
const [M, N, K] = [5, 133, 12]; // N spans two packed blocks of 128 columns

async function variableOf(
  name: string,
  shape: number[],
  data: Float32Array<ArrayBuffer>,
): Promise<Variable> {
  const { device } = await getGpu();
  const buffer = device.createBuffer({ label: name, size: data.byteLength, usage: TENSOR_USAGE });
  device.queue.writeBuffer(buffer, 0, data);
  return { name, shape, dtype: "f32", buffer };
}

for (const weightVariant of [variant, "texture_gemv_2x16"]) {
  Deno.test(`${weightVariant}: a weight's packing is refreshed per run unless the caller says variables are unchanged`, async () => {
    const gpu = await getGpu();
    const [w0, w1] = [uniformArray(N * K, 1), uniformArray(N * K, 2)];
    const weight = await variableOf("w", [N, K], w0);
    const g = new Graph();
    const x = g.input([M, K], "f32", "x");
    const y = matmul(x, g.variable(weight), { transB: true, variant: weightVariant });
    const exe = await compileGraph(gpu, [y], "variable-copies");
    try {
      // The weight's pack is a dispatch of its own, a variable copy; the texture variant copies x
      // into a texture before its product, the gemv reads x's buffer.
      const texture = weightVariant === variant;
      assertEquals(
        exe.dispatches.map((
          d,
        ) => [d.label.split(":")[0], Boolean(d.variableCopy), Boolean(d.before)]),
        [
          ["pack_weight", true, false],
          [texture ? "matmul_texture" : "matmul_texture_gemv", false, texture],
        ],
      );
      const xv = uniformArray(M * K, 3);
      const expect = (w: Float32Array<ArrayBuffer>) =>
        matmulRef(xv, w, { m: M, n: N, k: K, transB: true });
      const check = async (w: Float32Array<ArrayBuffer>, label: string) =>
        assertClose((await exe.read([y]))[0], expect(w), { atol: 1e-5, rtol: 1e-5, label });

      // A first run copies even when told the variables are unchanged.
      await exe.run(new Map([[x, xv]]), { variablesUnchanged: true });
      await check(w0, "first run");
      gpu.device.queue.writeBuffer(weight.buffer, 0, w1);
      await exe.run(new Map(), { variablesUnchanged: true });
      await check(w0, "copies kept: the run reads the weights of its previous run");
      await exe.run();
      await check(w1, "default: copies refreshed");
    } finally {
      exe.destroy();
      weight.buffer.destroy();
    }
  });
}

Deno.test("a variable the graph writes in place is copied on every run", async () => {
  const gpu = await getGpu();
  const maxLen = 4;
  const cache = await variableOf("cache", [1, maxLen, 1, K], new Float32Array(maxLen * K));
  const g = new Graph();
  const row = g.input([1, 1, 1, K], "f32", "row");
  const position = g.input([1, 1], "i32", "position");
  const q = g.input([M, K], "f32", "q");
  const written = writeKvCache(g.variable(cache), row, position);
  const y = matmul(q, reshape(written, [maxLen, K]), { transB: true, variant });
  const exe = await compileGraph(gpu, [y], "written-variable");
  try {
    assertEquals(exe.dispatches.map((d) => d.copyVariables !== undefined), [false, false]);
    const qv = uniformArray(M * K, 4);
    const rows = [uniformArray(K, 5), uniformArray(K, 6)];
    const keys = new Float32Array(maxLen * K);
    for (const [t, rv] of rows.entries()) {
      keys.set(rv, t * K);
      await exe.run(
        new Map<Tensor, Feed>([[q, qv], [row, rv], [position, Int32Array.of(t)]]),
        { variablesUnchanged: true },
      );
      const [out] = await exe.read([y]);
      const expected = matmulRef(qv, keys, { m: M, n: maxLen, k: K, transB: true });
      assertClose(out, expected, { atol: 1e-5, rtol: 1e-5, label: `after write ${t}` });
    }
  } finally {
    exe.destroy();
    cache.buffer.destroy();
  }
});

Deno.test("a graph keeps the packed weights another graph's latest run refreshed, where it holds no others", async () => {
  const gpu = await getGpu();
  const [w0, w1, v] = [11, 12, 13].map((seed) => uniformArray(N * K, seed));
  const weight = await variableOf("w", [N, K], w0);
  const other = await variableOf("v", [N, K], v);
  // Graphs of different shapes reading the weight, as prefill and decode do; the third also
  // reads a weight the first does not.
  const graph = async (rows: number, alsoOther: boolean) => {
    const g = new Graph();
    const x = g.input([rows, K], "f32", "x");
    const y = matmul(x, g.variable(weight), { transB: true, variant });
    const out = alsoOther
      ? matmulAccumulate(y, x, g.variable(other), { transB: true, variant })
      : y;
    return { exe: await compileGraph(gpu, [out], `copied-by-${rows}`), x, out, rows };
  };
  const first = await graph(M, false);
  const second = await graph(2, false);
  const third = await graph(3, true);
  /** The graph's output run after the first graph's, and x W^T (+ x V^T) of the given W. */
  const run = async (g: typeof first, w: Float32Array<ArrayBuffer>) => {
    const xv = uniformArray(g.rows * K, 14);
    await g.exe.run(new Map([[g.x, xv]]), { variablesCopiedBy: first.exe });
    const shape = { m: g.rows, n: N, k: K, transB: true };
    const expected = matmulRef(xv, w, shape);
    if (g === third) matmulRef(xv, v, shape).forEach((x, i) => expected[i] += x);
    return { out: (await g.exe.read([g.out]))[0], expected };
  };
  try {
    await first.exe.run(new Map([[first.x, uniformArray(M * K, 15)]]));
    // The weight changes behind the callers' backs: a graph that keeps the pack still reads w0.
    gpu.device.queue.writeBuffer(weight.buffer, 0, w1);
    const kept = await run(second, w0);
    assertClose(kept.out, kept.expected, { atol: 1e-5, rtol: 1e-5, label: "kept on a first run" });
    const packed = await run(third, w1);
    assertClose(packed.out, packed.expected, {
      atol: 1e-5,
      rtol: 1e-5,
      label: "refreshed: the third graph holds a texture the first does not",
    });
  } finally {
    [first, second, third].forEach((g) => g.exe.destroy());
    weight.buffer.destroy();
    other.buffer.destroy();
  }
});
