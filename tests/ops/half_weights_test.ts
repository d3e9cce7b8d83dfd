/**
 * Half-precision weights (bf16 and f16, two per 32-bit word): uploaded from F32 and 16-bit
 * checkpoint bytes without widening, read back exactly; the matmul by such a B (NT as a linear
 * layer's forward, NN as its backward, odd K so products start mid-word) and the embedding gather
 * of such a table against the f64 reference on the rounded values; the product's gradient with
 * respect to A; the texture variants packing it per run; the GPUs' gemv variants reading it as
 * stored (forced here on any adapter); which variants the autotune and the
 * untimed default pick (storage for a decode's few rows, packed textures for many on a CPU
 * adapter).
 */

import { assertEquals } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { grad } from "../../src/graph/autodiff.ts";
import { compileGraph } from "../../src/graph/executable.ts";
import { Graph } from "../../src/graph/graph.ts";
import { readVariables } from "../../src/graph/read_variables.ts";
import type { Variable } from "../../src/graph/tensor.ts";
import { uploadTensor } from "../../src/model/upload.ts";
import { embedding } from "../../src/ops/embedding.ts";
import { matmul, matmulShapes } from "../../src/ops/matmul.ts";
import { candidateVariants, heuristicVariant } from "../../src/ops/matmul_autotune.ts";
import { embeddingRef } from "../../src/reference/embedding.ts";
import { matmulRef } from "../../src/reference/matmul.ts";
import { fromBf16, fromF16, toBf16, toF16 } from "../../src/util/half.ts";
import { uniformArray } from "../../src/util/random.ts";

const FORMATS = ["bf16", "f16"] as const;

/** `values` rounded to `format` and back: what a half variable of them holds. */
function rounded(values: Float32Array, format: "bf16" | "f16"): Float32Array {
  return format === "bf16" ? fromBf16(toBf16(values)) : fromF16(toF16(values));
}

/** A variable of `shape` holding `values` stored as `format` (uploaded from F32 bytes). */
async function halfVariable(
  name: string,
  shape: number[],
  values: Float32Array<ArrayBuffer>,
  format: "bf16" | "f16",
): Promise<Variable> {
  const bytes = new Uint8Array(values.buffer);
  return await uploadTensor(await getGpu(), { name, dtype: "F32", shape, bytes }, {
    storeAs: format,
  });
}

Deno.test("half weights: upload from F32 and 16-bit bytes keeps the format's values exactly", async () => {
  const gpu = await getGpu();
  const values = uniformArray(7 * 5, 1, -3, 3); // odd count: the last word is half padding
  for (const format of FORMATS) {
    const bits = format === "bf16" ? toBf16(values) : toF16(values);
    const raw = { dtype: format === "bf16" ? "BF16" : "F16", bytes: new Uint8Array(bits.buffer) };
    const fromF32 = await halfVariable(`${format}_f32`, [7, 5], values, format);
    const as16 = await uploadTensor(gpu, { name: `${format}_16`, shape: [7, 5], ...raw } as never, {
      storeAs: format,
    });
    assertEquals([fromF32.dtype, fromF32.buffer.size], [format, 72]);
    const read = await readVariables(gpu.device, [fromF32, as16]);
    assertEquals([...read.get(`${format}_f32`)!], [...rounded(values, format)]);
    assertEquals([...read.get(`${format}_16`)!], [...rounded(values, format)]);
    fromF32.buffer.destroy();
    as16.buffer.destroy();
  }
});

/** Products by a half B: a linear forward (NT), its backward (NN), batched rows over a shared B. */
const CASES = [
  { label: "NT odd K", a: [13, 37], b: [21, 37], transB: true },
  { label: "NN", a: [9, 21], b: [21, 37], transB: false },
  { label: "NT batched", a: [3, 5, 38], b: [17, 38], transB: true },
];

Deno.test("half weights: matmul by a bf16 or f16 B matches the f64 reference", async () => {
  const gpu = await getGpu();
  for (const format of FORMATS) {
    for (const c of CASES) {
      const aData = uniformArray(c.a.reduce((x, y) => x * y), 2, -1, 1);
      const bData = uniformArray(c.b.reduce((x, y) => x * y), 3, -1, 1);
      const weight = await halfVariable("w", c.b, bData, format);
      const g = new Graph();
      const a = g.input(c.a);
      const y = matmul(a, g.variable(weight), { transB: c.transB });
      const da = grad(y, [a], g.constant(uniformArray(y.size, 4), y.shape))[0];
      const exe = await compileGraph(gpu, [y, da], "half_matmul");
      await exe.run(new Map([[a, aData]]));
      const [got, gotDa] = await exe.read([y, da]);
      exe.destroy();
      const shapes = matmulShapes(c.a, c.b, { transB: c.transB });
      const bRounded = rounded(bData, format);
      assertClose(got, matmulRef(aData, bRounded, shapes), {
        atol: 1e-5,
        rtol: 1e-5,
        label: `${format} ${c.label}`,
      });
      // dA = G op(B)^T: the NN / NT product by the same half B.
      const dShapes = matmulShapes(y.shape, c.b, { transB: !c.transB });
      assertClose(gotDa, matmulRef(uniformArray(y.size, 4), bRounded, dShapes), {
        atol: 1e-5,
        rtol: 1e-5,
        label: `${format} ${c.label} dA`,
      });
      weight.buffer.destroy();
    }
  }
});

Deno.test("half weights: an embedding gather from a bf16 or f16 table", async () => {
  const gpu = await getGpu();
  const [vocab, dim] = [11, 7];
  const tableData = uniformArray(vocab * dim, 5, -2, 2);
  const ids = Int32Array.from([3, 0, 10, 7, 3, 12, -1]);
  for (const format of FORMATS) {
    const table = await halfVariable("table", [vocab, dim], tableData, format);
    const g = new Graph();
    const idsT = g.input([ids.length], "i32");
    const out = embedding(g.variable(table), idsT);
    const exe = await compileGraph(gpu, [out], "half_embedding");
    await exe.run(new Map([[idsT, ids]]));
    const [got] = await exe.read([out]);
    exe.destroy();
    const expected = embeddingRef(rounded(tableData, format), dim, ids, 0);
    assertClose(got, expected, { atol: 0, rtol: 0, label: `${format} gather` });
    table.buffer.destroy();
  }
});

Deno.test("half weights: texture variants pack a half B per run for enough rows, as the reference", async () => {
  const gpu = await getGpu();
  for (const format of FORMATS) {
    for (
      const c of [{ a: [40, 36], b: [52, 36], transB: true }, {
        a: [33, 52],
        b: [52, 36],
        transB: false,
      }]
    ) {
      const aData = uniformArray(c.a[0] * c.a[1], 6, -1, 1);
      const bData = uniformArray(c.b[0] * c.b[1], 7, -1, 1);
      const weight = await halfVariable("w", c.b, bData, format);
      for (const variant of ["texture_16x16", "texture_32x12"]) {
        const [got] = await runMatmul(gpu, aData, c.a, weight, { transB: c.transB, variant });
        assertClose(got, matmulRef(aData, rounded(bData, format), matmulShapes(c.a, c.b, c)), {
          atol: 1e-5,
          rtol: 1e-5,
          label: `${format} ${variant} ${c.transB ? "NT" : "NN"}`,
        });
      }
      weight.buffer.destroy();
    }
  }
});

Deno.test("half weights: the gemv variants read a half B as stored (x W^T), as the reference", async () => {
  const gpu = await getGpu();
  const [a, b] = [[3, 72], [29, 72]];
  const aData = uniformArray(a[0] * a[1], 8, -1, 1);
  const bData = uniformArray(b[0] * b[1], 9, -1, 1);
  for (const format of FORMATS) {
    const weight = await halfVariable("w", b, bData, format);
    const expected = matmulRef(aData, rounded(bData, format), matmulShapes(a, b, { transB: true }));
    for (const variant of ["gemv_c2", "gemv_c8"]) {
      const [got] = await runMatmul(gpu, aData, a, weight, { transB: true, variant });
      assertClose(got, expected, { atol: 1e-5, rtol: 1e-5, label: `${format} ${variant}` });
    }
    weight.buffer.destroy();
  }
});

/** `a` (host data of shape `aShape`) times the variable `weight`, run once. */
async function runMatmul(
  gpu: Awaited<ReturnType<typeof getGpu>>,
  aData: Float32Array<ArrayBuffer>,
  aShape: number[],
  weight: Variable,
  options: { transB: boolean; variant: string },
) {
  const g = new Graph();
  const a = g.input(aShape);
  const y = matmul(a, g.variable(weight), options);
  const exe = await compileGraph(gpu, [y], "half_matmul_texture");
  await exe.run(new Map([[a, aData]]));
  const values = await exe.read([y]);
  exe.destroy();
  return values;
}

Deno.test("half weights: packed textures for many rows, storage for a decode's few", async () => {
  const gpu = await getGpu();
  const p = {
    batch: 1,
    m: 64,
    n: 256,
    k: 128,
    transA: false,
    transB: true,
    strideA: 64 * 128,
    strideB: 128 * 256,
    strideC: 64 * 256,
    bFormat: "bf16" as const,
  };
  for (const [m, storage] of [[8, true], [64, !gpu.summary.isFallback]] as const) {
    const candidates = candidateVariants(gpu, { ...p, m }, true);
    assertEquals(candidates.length > 0, true);
    assertEquals(candidates.every((v) => v.operands === "storage"), storage, `${m} rows`);
    const chosen = heuristicVariant(gpu, { ...p, m }, { constantB: true });
    assertEquals(chosen.misfit(gpu, { ...p, m }), undefined, `default for ${m} rows`);
  }
});
