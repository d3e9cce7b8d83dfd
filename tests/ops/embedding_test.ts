/**
 * Embedding lookup: forward against the f64 CPU reference on odd shapes with repeated, i32 and
 * u32, and out-of-range ids; backward (scatter-add) against finite differences and, for many
 * duplicates of one id, rows over several column blocks and a vocabulary past 65535 rows, against
 * the reference; rows no token holds are zero in every run.
 */

import { getGpu } from "../../src/gpu/device.ts";
import { compileGraph, type Feed } from "../../src/graph/executable.ts";

import { grad } from "../../src/graph/autodiff.ts";
import { Graph } from "../../src/graph/graph.ts";
import type { DType, Tensor } from "../../src/graph/tensor.ts";
import { embedding } from "../../src/ops/embedding.ts";
import { embeddingGradRef, embeddingRef } from "../../src/reference/embedding.ts";
import { mulberry32, uniformArray } from "../../src/util/random.ts";
import { assertClose } from "../_assert_close.ts";
import { assertEquals, assertThrows } from "../_asserts.ts";
import { checkGradients, randomInput, runOps, type TestInput } from "../_harness.ts";

/** An ids input of `shape` with values from `values` (i32 by default). */
function idsInput(shape: number[], values: number[], dtype: DType = "i32"): TestInput {
  const data = dtype === "i32" ? Int32Array.from(values) : Uint32Array.from(values);
  return { shape, data, dtype };
}

/** `n` ids drawn uniformly from [0, vocab) with `seed`. */
function randomIds(n: number, vocab: number, seed: number): number[] {
  const next = mulberry32(seed);
  return Array.from({ length: n }, () => Math.floor(next() * vocab));
}

/** Runs `embedding(table, ids)` and its table gradient for output gradient `seed`. */
async function runWithGrad(
  table: TestInput,
  ids: TestInput,
  seed: Float32Array<ArrayBuffer>,
) {
  return await runOps([table, ids], (t: Tensor, i: Tensor) => {
    const y = embedding(t, i);
    return [y, ...grad(y, [t], t.graph.constant(seed, y.shape))];
  });
}

Deno.test("embedding: forward matches CPU for repeated i32 and u32 ids", async () => {
  const [vocab, dim] = [37, 13];
  const table = randomInput([vocab, dim], 200, -2, 2);
  const values = [3, 36, 0, 3, 17, 3, 0, 36, 5, 5, 21, 9, 3, 30, 1]; // repeats, both ends
  for (const dtype of ["i32", "u32"] as const) {
    const ids = idsInput([3, 5], values, dtype);
    const [y] = await runOps([table, ids], (t: Tensor, i: Tensor) => embedding(t, i));
    assertClose(y, embeddingRef(table.data, dim, values), { label: dtype, atol: 0, rtol: 0 });
  }
});

Deno.test("embedding: scalar, 1-D and one-column lookups have the right shapes", async () => {
  const table = randomInput([6, 1], 201);
  const [scalar, positions] = await runOps(
    [table, idsInput([], [4]), idsInput([6], [0, 1, 2, 3, 4, 5])],
    (t: Tensor, one: Tensor, all: Tensor) => [embedding(t, one), embedding(t, all)],
  );
  assertEquals(Array.from(scalar), [table.data[4]]);
  assertEquals(Array.from(positions), Array.from(table.data));
});

Deno.test("embedding: out-of-range ids give zero rows and no gradient", async () => {
  const [vocab, dim] = [5, 3];
  const table = randomInput([vocab, dim], 202);
  const seed = uniformArray(4 * dim, 203);
  const cases = [
    idsInput([4], [-1, 2, 5, -2147483648], "i32"),
    idsInput([4], [7, 2, 5, 4294967295], "u32"),
  ];
  for (const ids of cases) {
    const [y, dTable] = await runWithGrad(table, ids, seed);
    // Only token 1 (id 2) is in range.
    const row2 = Array.from(table.data.subarray(2 * dim, 3 * dim));
    assertEquals(Array.from(y), [0, 0, 0, ...row2, 0, 0, 0, 0, 0, 0], `${ids.dtype} forward`);
    const expected = new Float64Array(vocab * dim);
    expected.set(seed.subarray(dim, 2 * dim), 2 * dim);
    assertClose(dTable, expected, { label: `${ids.dtype} gradient`, atol: 0, rtol: 0 });
  }
});

Deno.test("embedding: a row shard from `first` picks its own ids, and their gradient only", async () => {
  const [rows, dim, first] = [7, 5, 11];
  const table = randomInput([rows, dim], 205);
  const values = [10, 11, 17, 18, 3, 14, 11, 40, -1];
  const ids = idsInput([values.length], values);
  const seed = uniformArray(values.length * dim, 206);
  const [y, dTable] = await runOps([table, ids], (t: Tensor, i: Tensor) => {
    const out = embedding(t, i, first);
    return [out, ...grad(out, [t], t.graph.constant(seed, out.shape))];
  });
  assertClose(y, embeddingRef(table.data, dim, values, first), { atol: 0, rtol: 0 });
  assertClose(dTable, embeddingGradRef(seed, dim, values, rows, first), {
    atol: 1e-6,
    rtol: 1e-6,
  });
  // Ids 11, 17, 14 and 11 again fall in [11, 18); the others give zero rows.
  assertEquals(Array.from(y.subarray(0, dim)), [0, 0, 0, 0, 0]);
  assertEquals(Array.from(y.subarray(dim, 2 * dim)), Array.from(table.data.subarray(0, dim)));
});

Deno.test("embedding: table gradient matches finite differences", async () => {
  const cases = [
    {
      vocab: 37,
      dim: 13,
      shape: [3, 5],
      values: [3, 36, 0, 3, 17, 3, 0, 36, 5, 5, 21, 9, 3, 30, 1],
    },
    { vocab: 4, dim: 300, shape: [5], values: [1, 1, 3, 0, 1] }, // rows over 10 column blocks
    { vocab: 9, dim: 2, shape: [2, 3], values: [8, -1, 8, 9, 0, 8] },
  ];
  for (const { vocab, dim, shape, values } of cases) {
    await checkGradients({
      label: `embedding [${vocab},${dim}] ids [${shape}]`,
      inputs: [randomInput([vocab, dim], 204), idsInput(shape, values)],
      build: (t: Tensor, i: Tensor) => embedding(t, i),
      reference: (table, ids) => embeddingRef(table, dim, ids),
    });
  }
});

Deno.test("embedding: scatter-add of many duplicates matches CPU, bit-identical on rerun", async () => {
  const [vocab, dim] = [5, 13];
  const table = randomInput([vocab, dim], 205);
  const cases = [
    new Array(300).fill(2), // one id 300 times: one writer adds 299 later tokens
    randomIds(600, 3, 206), // few ids, many tokens each
  ];
  for (const [k, values] of cases.entries()) {
    const ids = idsInput([values.length], values);
    const seed = uniformArray(values.length * dim, 207 + k);
    const [y, dTable] = await runWithGrad(table, ids, seed);
    assertClose(y, embeddingRef(table.data, dim, values), { label: `forward ${k}`, atol: 0 });
    assertClose(dTable, embeddingGradRef(seed, dim, values, vocab), {
      label: `gradient ${k}`,
      atol: 1e-5,
      rtol: 1e-5,
    });
    const [, again] = await runWithGrad(table, ids, seed);
    assertEquals(Array.from(again), Array.from(dTable), `gradient ${k} is not bit-identical`);
  }
});

Deno.test("embedding: a vocabulary over 65535 rows", async () => {
  const [vocab, dim] = [70001, 2];
  const table = randomInput([vocab, dim], 208);
  const values = [12345, 0, 65535, 70000, 65536, 70000, 69999];
  const seed = uniformArray(values.length * dim, 209);
  const [y, dTable] = await runWithGrad(table, idsInput([values.length], values), seed);
  assertClose(y, embeddingRef(table.data, dim, values), { label: "forward", atol: 0, rtol: 0 });
  assertClose(dTable, embeddingGradRef(seed, dim, values, vocab), { label: "gradient" });
});

Deno.test("embedding: rows of ids no token holds have a zero gradient in every run", async () => {
  // The gradient's buffer is cleared before each backward launch (it writes only rows of ids
  // that occur), so rows written by an earlier run, or left in a pooled buffer, read as zero.
  const [vocab, dim] = [11, 37];
  const g = new Graph();
  const table = g.input([vocab, dim], "f32", "table");
  const ids = g.input([6], "i32", "ids");
  const y = embedding(table, ids);
  const seed = uniformArray(6 * dim, 210);
  const [dTable] = grad(y, [table], g.constant(seed, y.shape));
  const exe = await compileGraph(await getGpu(), [dTable], "embedding twice");
  try {
    for (const values of [[1, 2, 3, 4, 5, 6], [7, 7, 0, 10, 7, 0]]) {
      const feeds = new Map<Tensor, Feed>([
        [table, uniformArray(vocab * dim, 211)],
        [ids, Int32Array.from(values)],
      ]);
      await exe.run(feeds);
      const [out] = await exe.read([dTable]);
      assertClose(out, embeddingGradRef(seed, dim, values, vocab), {
        label: `ids ${values}`,
        atol: 1e-6,
        rtol: 1e-6,
      });
    }
  } finally {
    exe.destroy();
  }
});

Deno.test("embedding: rejects wrong dtypes and table shapes, naming the op", () => {
  const g = new Graph();
  const table = g.input([7, 3], "f32", "table");
  const ids = g.input([2, 4], "i32", "ids");
  assertThrows(() => embedding(table, g.input([2], "f32", "fids")), Error, "i32 or u32 ids");
  assertThrows(
    () => embedding(g.input([7, 3], "u32", "utable"), ids),
    Error,
    '"embedding" to utable[7,3]:u32',
  );
  assertThrows(() => embedding(g.input([21], "f32", "flat"), ids), Error, "[vocab, dim]");
});
