// Launch copies of variables (a weight's texture in the texture matmul): refreshed on every run
// by default, kept while the caller vouches the variables are unchanged (not on a first run), and
// never kept for a variable the graph itself writes in place (a KV cache).

import { assertEquals } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { TENSOR_USAGE } from "../../src/gpu/buffer_pool.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { compileGraph, type Feed } from "../../src/graph/executable.ts";
import { Graph } from "../../src/graph/graph.ts";
import type { Tensor, Variable } from "../../src/graph/tensor.ts";
import { writeKvCache } from "../../src/ops/kv_cache.ts";
import { matmul } from "../../src/ops/matmul.ts";
import { reshape } from "../../src/ops/reshape.ts";
import { matmulRef } from "../../src/reference/matmul.ts";
import { uniformArray } from "../../src/util/random.ts";

const variant = "texture_4x16"; // copies both operands into textures
const [M, N, K] = [5, 7, 12];

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

Deno.test("a weight's copy is refreshed per run unless the caller says variables are unchanged", async () => {
  const gpu = await getGpu();
  const [w0, w1] = [uniformArray(N * K, 1), uniformArray(N * K, 2)];
  const weight = await variableOf("w", [N, K], w0);
  const g = new Graph();
  const x = g.input([M, K], "f32", "x");
  const y = matmul(x, g.variable(weight), { transB: true, variant });
  const exe = await compileGraph(gpu, [y], "variable-copies");
  try {
    const [d] = exe.dispatches;
    assertEquals([d.before !== undefined, d.copyVariables !== undefined], [true, true]);
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
