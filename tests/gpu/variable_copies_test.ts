// Launch copies of variables (a weight's packed texture in the texture matmuls, a texture copy
// of any other variable): made once per version of the variable, by whichever graph runs first
// after a write (a write outside a graph is announced with `variableTextures.written`; a graph
// that writes a variable in place moves its version on each run), and never kept for a variable
// the graph itself writes in place (a KV cache).

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
const [M, N, K] = [5, 133, 12]; // N spans five packed strips of 32 columns

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
  Deno.test(`${weightVariant}: a weight is packed once per version`, async () => {
    const gpu = await getGpu();
    const [w0, w1] = [uniformArray(N * K, 1), uniformArray(N * K, 2)];
    const weight = await variableOf("w", [N, K], w0);
    const g = new Graph();
    const x = g.input([M, K], "f32", "x");
    const y = matmul(x, g.variable(weight), { transB: true, variant: weightVariant });
    const exe = await compileGraph(gpu, [y], "variable-copies");
    try {
      // The weight's pack is a dispatch of its own, a variable copy; the texture variant fills
      // x's texture by a dispatch before its product, the gemv reads x's buffer.
      const texture = weightVariant === variant;
      assertEquals(
        exe.dispatches.map((
          d,
        ) => [d.label.split(":")[0], Boolean(d.variableCopy), Boolean(d.before)]),
        [
          ["pack_weight", true, false],
          ...(texture
            ? [["copy_to_texture", false, false], ["matmul_texture", false, false]]
            : [["matmul_texture_gemv", false, false]]),
        ],
      );
      const xv = uniformArray(M * K, 3);
      const expect = (w: Float32Array<ArrayBuffer>) =>
        matmulRef(xv, w, { m: M, n: N, k: K, transB: true });
      const check = async (w: Float32Array<ArrayBuffer>, label: string) =>
        assertClose((await exe.read([y]))[0], expect(w), { atol: 1e-5, rtol: 1e-5, label });

      await exe.run(new Map([[x, xv]]));
      await check(w0, "first run");
      // A write nobody announces is not seen: the run keeps the packing of the weight's version.
      gpu.device.queue.writeBuffer(weight.buffer, 0, w1);
      await exe.run();
      await check(w0, "copies kept: the version did not move");
      gpu.variableTextures.written(weight.buffer);
      await exe.run();
      await check(w1, "announced write: copies refreshed");
      await exe.run();
      await check(w1, "kept again");
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
    // The written cache is no constant: its texture is filled every run, like q's.
    assertEquals(
      exe.dispatches.map((d) => [d.label.split(/[.:]/)[0], d.copyVariables !== undefined]),
      [["kv_cache", false], ["copy_to_texture", false], ["copy_to_texture", false], [
        "matmul_texture",
        false,
      ]],
    );
    const qv = uniformArray(M * K, 4);
    const rows = [uniformArray(K, 5), uniformArray(K, 6)];
    const keys = new Float32Array(maxLen * K);
    for (const [t, rv] of rows.entries()) {
      keys.set(rv, t * K);
      await exe.run(new Map<Tensor, Feed>([[q, qv], [row, rv], [position, Int32Array.of(t)]]));
      const [out] = await exe.read([y]);
      const expected = matmulRef(qv, keys, { m: M, n: maxLen, k: K, transB: true });
      assertClose(out, expected, { atol: 1e-5, rtol: 1e-5, label: `after write ${t}` });
    }
  } finally {
    exe.destroy();
    cache.buffer.destroy();
  }
});

Deno.test("graphs share a weight's packing per version; a graph writing the weight in place moves it", async () => {
  const gpu = await getGpu();
  const [w0, v] = [11, 13].map((seed) => uniformArray(N * K, seed));
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
    return { exe: await compileGraph(gpu, [out], `shared-${rows}`), x, out, rows };
  };
  // A graph writing one row of the weight in place (through a view of its buffer as a cache).
  const asCache: Variable = { ...weight, name: "w-as-cache", shape: [1, N, 1, K] };
  const w = new Graph();
  const row = w.input([1, 1, 1, K], "f32", "row");
  const position = w.input([1, 1], "i32", "position");
  const writer = await compileGraph(gpu, [writeKvCache(w.variable(asCache), row, position)], "w");
  const first = await graph(M, false);
  const second = await graph(2, false);
  const third = await graph(3, true);
  const current = Float32Array.from(w0);
  /** The graph's output, and x W^T (+ x V^T) of the weight as it is now (`current`). */
  const run = async (g: typeof first) => {
    const xv = uniformArray(g.rows * K, 14);
    await g.exe.run(new Map([[g.x, xv]]));
    const shape = { m: g.rows, n: N, k: K, transB: true };
    const expected = matmulRef(xv, current, shape);
    if (g === third) matmulRef(xv, v, shape).forEach((x, i) => expected[i] += x);
    return { out: (await g.exe.read([g.out]))[0], expected };
  };
  const tolerance = { atol: 1e-5, rtol: 1e-5 };
  try {
    const ran = await run(first);
    assertClose(ran.out, ran.expected, { ...tolerance, label: "first graph" });
    // An unannounced write shows which graphs pack again: the second graph's first run keeps
    // the first graph's packing (still w0), the third packs both weights (it holds a texture
    // the first does not).
    const w1 = uniformArray(N * K, 12);
    gpu.device.queue.writeBuffer(weight.buffer, 0, w1);
    const kept = await run(second);
    assertClose(kept.out, kept.expected, { ...tolerance, label: "kept on a first run" });
    current.set(w1);
    const packed = await run(third);
    assertClose(packed.out, packed.expected, { ...tolerance, label: "third graph packs" });
    // The in-place writer moves the weight's version: the next reader packs it again.
    const rv = uniformArray(K, 16);
    await writer.run(new Map<Tensor, Feed>([[row, rv], [position, Int32Array.of(7)]]));
    current.set(rv, 7 * K);
    const after = await run(second);
    assertClose(after.out, after.expected, { ...tolerance, label: "after an in-place write" });
  } finally {
    [first, second, third].forEach((g) => g.exe.destroy());
    writer.destroy();
    weight.buffer.destroy();
    other.buffer.destroy();
  }
});
