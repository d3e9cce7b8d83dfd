// Matmul: every kernel variant against the f64 CPU reference on odd shapes (all transpose
// combinations, shared and per-batch operands; for the texture and vec4 variants, the layouts they take),
// backward against finite differences, shape and variant errors, and the autotuner's cache.
// Variants are forced by name, so no result depends on timing.

import { autotune, autotuneChoices, autotuneEnabled, pickFastest } from "../../src/gpu/autotune.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { prepareDispatch } from "../../src/gpu/dispatch.ts";
import { compileGraph } from "../../src/graph/executable.ts";
import { Graph } from "../../src/graph/graph.ts";
import type { Tensor } from "../../src/graph/tensor.ts";
import { foldSharedB, matmul, matmulAccumulate, matmulShapes } from "../../src/ops/matmul.ts";
import {
  balancedColumnQuads,
  candidateVariants,
  heuristicVariant,
} from "../../src/ops/matmul_autotune.ts";
import {
  MATMUL_VARIANTS,
  matmulLaunch,
  type MatmulProblem,
  matmulVariant,
} from "../../src/ops/matmul_variants.ts";
import { textureRows } from "../../src/ops/operand_texture.ts";
import { matmulRef } from "../../src/reference/matmul.ts";
import { assertEquals, assertRejects } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { checkGradients, randomInput, runOps, type TestInput } from "../_harness.ts";

interface Case {
  label: string;
  a: number[];
  b: number[];
  transA?: boolean;
  transB?: boolean;
  /** Absolute and relative tolerance (default 1e-5): one f32 sum over a long K drifts more. */
  tolerance?: number;
}

// Odd sizes: none is a multiple of any tile, vector width or workgroup size.
const M = 37, N = 29, K = 53;
const CASES: Case[] = [
  { label: "NN", a: [M, K], b: [K, N] },
  { label: "TN", a: [K, M], b: [K, N], transA: true },
  { label: "NT", a: [M, K], b: [N, K], transB: true },
  { label: "TT", a: [K, M], b: [N, K], transA: true, transB: true },
  { label: "M=1", a: [1, K], b: [K, N] },
  { label: "N=1", a: [M, K], b: [K, 1] },
  { label: "K=1", a: [M, 1], b: [1, N] },
  { label: "batched, shared B", a: [3, 9, 11], b: [11, 7] },
  { label: "batched, shared B^T, A^T", a: [2, 11, 9], b: [7, 11], transA: true, transB: true },
  { label: "batched per-batch B", a: [2, 3, 5, 13], b: [2, 3, 13, 6] },
  { label: "shared A", a: [5, 13], b: [3, 13, 6] },
];

// The texture and vec4 variants need the contiguous dimension of each stored operand (K of A, M
// of A^T, N of B, K of B^T) to be a multiple of 4; M and N stay odd wherever that allows, K is odd where
// neither operand is contiguous along it (A^T B), and one operand spans two texture rows.
const ALIGNED_CASES: Case[] = [
  { label: "NT", a: [37, 52], b: [29, 52], transB: true },
  { label: "NN", a: [37, 52], b: [52, 28] },
  { label: "TN, K odd", a: [53, 36], b: [53, 28], transA: true },
  { label: "TT", a: [52, 36], b: [29, 52], transA: true, transB: true },
  { label: "N spans workgroups", a: [9, 16], b: [133, 16], transB: true },
  { label: "M spans workgroups", a: [133, 8], b: [8, 12] },
  { label: "batched, shared B^T", a: [3, 9, 12], b: [7, 12], transB: true },
  { label: "batched per-batch B^T", a: [2, 3, 5, 12], b: [2, 3, 7, 12], transB: true },
  { label: "shared A^T, batched B, K odd", a: [5, 8], b: [3, 5, 12], transA: true },
  { label: "A on two texture rows", a: [37, 1028], b: [29, 1028], transB: true },
];

// The gemv variants take A not transposed and M <= 16 (a batch over a shared B folds into rows),
// B stored either way; N spans five packed strips of 32 columns (two workgroups) in one case.
const GEMV_CASES: Case[] = [
  { label: "NT, M=1", a: [1, 52], b: [29, 52], transB: true },
  { label: "NT, N spans strips", a: [3, 52], b: [133, 52], transB: true },
  { label: "NN", a: [5, 52], b: [52, 28] },
  { label: "batched, shared B^T", a: [3, 3, 12], b: [7, 12], transB: true },
  // 2056 products summed in f32, one after another: ~3e-5 off the f64 sum.
  { label: "M=16, long K", a: [16, 2056], b: [9, 2056], transB: true, tolerance: 1e-4 },
];

// The GPU gemv variants (`gemv.ts`) take A as stored by B transposed (x W^T), M <= 8 after a
// batch over a shared B folds into rows, K a multiple of 4: one chunk of K, lanes past K's
// chunks, 133 columns over several workgroups, both row groups of 8 rows over a long K.
const SPLIT_GEMV_CASES: Case[] = [
  { label: "NT, M=1", a: [1, 52], b: [29, 52], transB: true },
  { label: "NT, K=4, N=1", a: [5, 4], b: [1, 4], transB: true },
  { label: "NT, N spans workgroups", a: [3, 52], b: [133, 52], transB: true },
  { label: "batched, shared B^T", a: [2, 3, 12], b: [7, 12], transB: true },
  { label: "M=8, long K", a: [8, 2056], b: [9, 2056], transB: true, tolerance: 1e-4 },
];

/** The cases of `cases` with these labels. */
function pick(cases: readonly Case[], labels: readonly string[]): Case[] {
  return cases.filter((c) => labels.includes(c.label));
}

/** Runs `cases` with `variant` forced, in one graph, against the f64 reference. */
async function forwardMatchesCpu(variant: string, cases: readonly Case[]) {
  const inputs = cases.flatMap((c, i) => [
    randomInput(c.a, 2 * i + 1),
    randomInput(c.b, 2 * i + 2),
  ]);
  const build = (...xs: Tensor[]) =>
    cases.map((c, i) => matmul(xs[2 * i], xs[2 * i + 1], { ...c, variant }));
  const outputs = await runOps(inputs, build);
  cases.forEach((c, i) => {
    const ref = matmulRef(inputs[2 * i].data, inputs[2 * i + 1].data, matmulShapes(c.a, c.b, c));
    const tol = c.tolerance ?? 1e-5;
    assertClose(outputs[i], ref, { atol: tol, rtol: tol, label: `${variant} ${c.label}` });
  });
}

/**
 * `matmulAccumulate` with `variant` forced: each case adds its product to a random C in place,
 * against C + the f64 reference (stores past N redirected onto column N-1 must not add twice).
 * Few layouts (each is a pipeline to compile, slow on llvmpipe): the store is what differs.
 */
async function accumulateMatchesCpu(variant: string, cases: readonly Case[]) {
  const inputs = cases.flatMap((c, i) => [
    randomInput(matmulShapes(c.a, c.b, c).shape, 3 * i + 101),
    randomInput(c.a, 3 * i + 102),
    randomInput(c.b, 3 * i + 103),
  ]);
  const build = (...xs: Tensor[]) =>
    cases.map((c, i) =>
      matmulAccumulate(xs[3 * i], xs[3 * i + 1], xs[3 * i + 2], { ...c, variant })
    );
  const outputs = await runOps(inputs, build);
  cases.forEach((c, i) => {
    const product = matmulRef(
      inputs[3 * i + 1].data,
      inputs[3 * i + 2].data,
      matmulShapes(c.a, c.b, c),
    );
    const ref = Float64Array.from(product, (x, j) => x + (inputs[3 * i].data[j] as number));
    assertClose(outputs[i], ref, { atol: 1e-5, rtol: 1e-5, label: `${variant} += ${c.label}` });
  });
}

for (const variant of MATMUL_VARIANTS.filter((v) => !v.alignedOperands)) {
  Deno.test(`matmul ${variant.name}: forward matches CPU on odd shapes`, () =>
    forwardMatchesCpu(variant.name, CASES));
  Deno.test(`matmul ${variant.name}: accumulating into C matches CPU on odd shapes`, () =>
    accumulateMatchesCpu(variant.name, pick(CASES, ["NN", "batched per-batch B"])));
}

for (const variant of MATMUL_VARIANTS.filter((v) => v.alignedOperands && !v.gpuOnly)) {
  const gemv = variant.name.startsWith("texture_gemv");
  const cases = gemv ? GEMV_CASES : ALIGNED_CASES;
  Deno.test(`matmul ${variant.name}: forward matches CPU on odd shapes it takes`, () =>
    forwardMatchesCpu(variant.name, cases));
  Deno.test(`matmul ${variant.name}: accumulating into C matches CPU on odd shapes it takes`, () =>
    accumulateMatchesCpu(variant.name, pick(cases, ["NN", gemv ? "NT, M=1" : "NT"])));
}

// The GPU gemv variants, forced here; those summing by subgroups where subgroups work (elsewhere
// they refuse every problem, naming why).
for (const variant of MATMUL_VARIANTS.filter((v) => v.gpuOnly)) {
  Deno.test(`matmul ${variant.name}: forward and accumulation match CPU on odd shapes`, async () => {
    const gpu = await getGpu();
    const p = matmulShapes([1, 52], [29, 52], { transB: true });
    if (variant.name.includes("_sg_") && !gpu.hasSubgroups) {
      assertEquals(variant.misfit(gpu, p), "expected a device where subgroups work");
      return;
    }
    await forwardMatchesCpu(variant.name, SPLIT_GEMV_CASES);
    await accumulateMatchesCpu(variant.name, pick(SPLIT_GEMV_CASES, ["NT, M=1", "M=8, long K"]));
  });
}

Deno.test("matmul texture_32x16: later ops reuse earlier ops' operand textures, A and B stay apart", async () => {
  // A chain of four products whose A and B operands all have one texture shape: two textures in
  // all (one per operand of an op), each refilled by the op that reads it.
  const n = 52, steps = 4;
  const inputs = Array.from({ length: steps + 1 }, (_, i) => randomInput([n, n], 30 + i));
  const gpu = await getGpu();
  const g = new Graph();
  const xs = inputs.map((inp, i) => g.input(inp.shape, "f32", `x${i}`));
  let y = xs[0];
  for (let i = 1; i <= steps; i++) {
    y = matmul(y, xs[i], { transB: true, variant: "texture_32x16" });
  }
  const exe = await compileGraph(gpu, [y], "texture reuse");
  await exe.run(new Map(xs.map((x, i) => [x, inputs[i].data])));
  const [out] = await exe.read([y]);
  assertEquals(exe.stats.textures, 2);
  exe.destroy();
  let ref: ArrayLike<number> = inputs[0].data;
  for (let i = 1; i <= steps; i++) {
    ref = matmulRef(ref, inputs[i].data, matmulShapes([n, n], [n, n], { transB: true }));
  }
  assertClose(out, ref, { atol: 1e-4, rtol: 1e-4, label: "chain" });
});

Deno.test("matmul texture_32x16: products of one activation fill its texture once; a live copy is not lent out", async () => {
  // x @ W1^T, z @ W2^T, x @ W3^T with x and z of one texture shape: x's texture is filled by
  // the first product and read by the third; z, live while x is, gets a texture of its own.
  const [m, k, n] = [5, 52, 12];
  const [x, z, w1, w2, w3] = [[m, k], [m, k], [n, k], [n, k], [n, k]].map((shape, i) =>
    randomInput(shape, 80 + i)
  );
  const gpu = await getGpu();
  const g = new Graph();
  const [tx, tz, t1, t2, t3] = [x, z, w1, w2, w3].map((inp, i) =>
    g.input(inp.shape, "f32", `in${i}`)
  );
  const variant = "texture_32x16";
  const outs = [[tx, t1], [tz, t2], [tx, t3]].map(([a, b]) =>
    matmul(a, b, { transB: true, variant })
  );
  const exe = await compileGraph(gpu, outs, "shared activation");
  const shaders = exe.dispatches.map((d) => d.label.split(":")[0]);
  assertEquals(shaders, [
    ...["copy_to_texture", "copy_to_texture", "matmul_texture"], // x, W1
    ...["copy_to_texture", "copy_to_texture", "matmul_texture"], // z, W2
    ...["copy_to_texture", "matmul_texture"], // W3 (x's texture is filled)
  ]);
  await exe.run(new Map([tx, tz, t1, t2, t3].map((t, i) => [t, [x, z, w1, w2, w3][i].data])));
  const got = await exe.read(outs);
  exe.destroy();
  [[x, w1], [z, w2], [x, w3]].forEach(([a, b], i) => {
    const ref = matmulRef(a.data, b.data, matmulShapes([m, k], [n, k], { transB: true }));
    assertClose(got[i], ref, { atol: 1e-4, rtol: 1e-4, label: `product ${i}` });
  });
});

// A constant B (a weight variable) is read packed by the texture variants in every layout they
// take: NT (forward), NN (a backward, from the same packed texture), TN with K odd, and a batch
// over it; the gemv reads it packed by output columns.
const PACKED_CASES: [string, Case[]][] = [
  ["texture_8x16", [
    { label: "NT", a: [37, 52], b: [133, 52], transB: true },
    { label: "NN", a: [37, 132], b: [132, 28] },
    { label: "TN, K odd", a: [53, 36], b: [53, 28], transA: true },
    { label: "batched, shared B^T", a: [3, 9, 12], b: [7, 12], transB: true },
  ]],
  ["texture_32x12", [
    { label: "NT", a: [37, 52], b: [133, 52], transB: true },
    { label: "NN", a: [37, 132], b: [132, 28] },
  ]],
  ["texture_gemv_2x16", pick(GEMV_CASES, ["NT, N spans strips", "NN"])],
];
for (const [variant, cases] of PACKED_CASES) {
  Deno.test(`matmul ${variant}: a constant B is read packed and matches CPU`, async () => {
    const gpu = await getGpu();
    const g = new Graph();
    const data = cases.map((c, i) => [randomInput(c.a, 60 + 2 * i), randomInput(c.b, 61 + 2 * i)]);
    const weights = cases.map((c, i) => {
      const buffer = gpu.device.createBuffer({
        size: data[i][1].data.length * 4,
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
      });
      gpu.device.queue.writeBuffer(buffer, 0, Float32Array.from(data[i][1].data));
      return { name: `w${i}`, shape: c.b, dtype: "f32" as const, buffer };
    });
    const xs = cases.map((c, i) => g.input(c.a, "f32", `x${i}`));
    const ys = cases.map((c, i) => matmul(xs[i], g.variable(weights[i]), { ...c, variant }));
    const exe = await compileGraph(gpu, ys, `packed ${variant}`);
    try {
      const packs = exe.dispatches.filter((d) => d.label.startsWith("pack_weight")).length;
      assertEquals(packs, cases.length, "one pack per weight");
      await exe.run(new Map(xs.map((x, i) => [x, Float32Array.from(data[i][0].data)])));
      const outs = await exe.read(ys);
      cases.forEach((c, i) => {
        const ref = matmulRef(data[i][0].data, data[i][1].data, matmulShapes(c.a, c.b, c));
        assertClose(outs[i], ref, { atol: 1e-5, rtol: 1e-5, label: `${variant} ${c.label}` });
      });
    } finally {
      exe.destroy();
      weights.forEach((w) => w.buffer.destroy());
    }
  });
}

Deno.test("matmul: a batch over a shared B folds into rows; other layouts stay as they are", () => {
  const folded = foldSharedB(matmulShapes([32, 1, 576], [1536, 576], { transB: true }));
  assertEquals(
    [folded.batch, folded.m, folded.n, folded.k, folded.strideA, folded.strideB, folded.strideC],
    [1, 32, 1536, 576, 32 * 576, 0, 32 * 1536],
  );
  for (
    const p of [
      matmulShapes([3, 9, 11], [3, 11, 7]), // per-batch B
      matmulShapes([2, 11, 9], [7, 11], { transA: true, transB: true }), // A^T: rows not contiguous
      matmulShapes([9, 11], [11, 7]), // one batch
    ]
  ) assertEquals(foldSharedB(p), p);
});

Deno.test("matmul texture_32x16: a layout it cannot take is an error naming it", async () => {
  const gpu = await getGpu();
  const g = new Graph();
  const y = matmul(g.input([37, 52]), g.input([52, 29]), { variant: "texture_32x16" });
  await assertRejects(
    () => compileGraph(gpu, [y]),
    Error,
    'Cannot use matmul variant "texture_32x16" for 1 x [37,52] @ [52,29] (NN): expected the ' +
      "contiguous dimension of b (N) to be a multiple of 4, received 29",
  );
});

Deno.test("matmul texture_32x16: fits the backward forms of an aligned forward", async () => {
  const gpu = await getGpu();
  const texture = matmulVariant("texture_32x16");
  // Forward [37,52] @ [52,28]; dA = G [37,28] @ B^T, dB = A^T @ G.
  const forms = [
    matmulShapes([37, 52], [52, 28]),
    matmulShapes([37, 28], [52, 28], { transB: true }),
    matmulShapes([37, 52], [37, 28], { transA: true }),
    matmulShapes([4, 37, 52], [52, 28]),
    matmulShapes([4 * 37, 52], [4 * 37, 28], { transA: true }),
  ];
  for (const p of forms) {
    const why = texture.misfit(gpu, p);
    if (why) throw new Error(`expected the texture variant to fit ${JSON.stringify(p)}: ${why}`);
  }
});

/** Gradient check of one matmul with small shapes (finite differences are O(size^2)). */
function gradCase(c: Case, variant: string) {
  const inputs: TestInput[] = [randomInput(c.a, 5), randomInput(c.b, 6)];
  return checkGradients({
    label: `${variant} ${c.label}`,
    inputs,
    build: (x, y) => matmul(x, y, { transA: c.transA, transB: c.transB, variant }),
    reference: (x, y) => matmulRef(x, y, matmulShapes(c.a, c.b, c)),
  });
}

const GRAD_CASES: Case[] = [
  { label: "NN", a: [5, 7], b: [7, 6] },
  { label: "TN", a: [7, 5], b: [7, 6], transA: true },
  { label: "NT", a: [5, 7], b: [6, 7], transB: true },
  { label: "TT", a: [7, 5], b: [6, 7], transA: true, transB: true },
  { label: "batched, shared B", a: [3, 4, 5], b: [5, 6] },
  { label: "batched, shared B^T", a: [3, 4, 5], b: [6, 5], transB: true },
  { label: "batched A^T, shared B", a: [3, 5, 4], b: [5, 6], transA: true },
  { label: "batched per-batch B", a: [2, 4, 5], b: [2, 5, 3] },
  { label: "shared A^T, batched B^T", a: [5, 4], b: [2, 3, 5], transA: true, transB: true },
];

// For the texture variant every backward matmul must fit too: the contiguous dimensions of a, b
// and the output gradient (N) are multiples of 4; M and the K of dB = A^T G (that is, M) are odd.
const TEXTURE_GRAD_CASES: Case[] = [
  { label: "NN", a: [5, 8], b: [8, 4] },
  { label: "TN", a: [8, 4], b: [8, 4], transA: true },
  { label: "NT", a: [5, 8], b: [4, 8], transB: true },
  { label: "TT", a: [8, 4], b: [4, 8], transA: true, transB: true },
  { label: "batched, shared B", a: [3, 5, 8], b: [8, 4] },
  { label: "batched, shared B^T", a: [3, 5, 8], b: [4, 8], transB: true },
  { label: "batched per-batch B", a: [2, 5, 8], b: [2, 8, 4] },
];

const GRAD_RUNS: [string, Case[]][] = [
  ["regblock_16x16", GRAD_CASES],
  ["tiled_32x32", GRAD_CASES],
  ["texture_32x16", TEXTURE_GRAD_CASES],
];
for (const [variant, cases] of GRAD_RUNS) {
  for (const c of cases) {
    Deno.test(`matmul ${variant} ${c.label}: backward matches finite differences`, () =>
      gradCase(c, variant));
  }
}

Deno.test("matmul: shape errors name the operands and what differs", () => {
  const g = new Graph();
  const throwsWith = (fn: () => unknown, text: string) => {
    try {
      fn();
    } catch (err) {
      if (!(err as Error).message.includes(text)) {
        throw new Error(
          `expected an error containing "${text}", received "${(err as Error).message}"`,
        );
      }
      return;
    }
    throw new Error(`expected an error containing "${text}"`);
  };
  throwsWith(
    () => matmul(g.input([4, 5]), g.input([6, 3])),
    "Cannot matmul [4,5] by [6,3]: inner dimensions differ (K=5 from a, 6 from b)",
  );
  throwsWith(() => matmul(g.input([2, 4, 5]), g.input([3, 5, 2])), "batch dimensions differ");
  throwsWith(() => matmul(g.input([5]), g.input([5, 2])), "at least 2 dimensions");
  throwsWith(
    () => matmul(g.input([4, 5]), g.input([5, 2]), { variant: "nope" }),
    'Unknown matmul variant "nope"',
  );
  const s = matmulShapes([2, 3, 7, 5], [4, 5], { transB: true });
  if (s.shape.join() !== "2,3,7,4" || s.strideB !== 0 || s.batch !== 6) {
    throw new Error(`unexpected shapes ${JSON.stringify(s)}`);
  }
});

Deno.test("matmul textures: heights are never powers of two, at most one row past 3 rows", () => {
  // One row of texels (1 is a power of two) becomes 3; 2 and 4 rows get one more; others stay.
  const cases: [number, number][] = [[5, 3], [8192, 3], [8193, 3], [16385, 3], [24577, 5]];
  // Qwen2.5-0.5B's tied embedding: 151936 x 896 f32 = 34 033 664 texels.
  cases.push([34_033_664, 4155], [4 * 8192, 5], [4155 * 8192, 4155]);
  for (const [texels, rows] of cases) assertEquals(textureRows(texels, 8192), rows, `${texels}`);
});

Deno.test("matmul texture_32x16: an operand past the largest texture is a misfit", async () => {
  const gpu = await getGpu();
  const side = gpu.device.limits.maxTextureDimension2D;
  const width = 2 ** Math.floor(Math.log2(side));
  const texture = matmulVariant("texture_32x16");
  // B^T [N, K] with K = 4 * width: N rows of texels; side - 2 fit, side + 1 do not.
  const k = 4 * width;
  const fits = matmulShapes([4, k], [side - 2, k], { transB: true });
  assertEquals(texture.misfit(gpu, fits), undefined);
  const why = texture.misfit(gpu, matmulShapes([4, k], [side + 1, k], { transB: true }));
  if (!why?.includes("expected b to fit one rgba32float texture")) {
    throw new Error(`expected a misfit naming b, received ${why}`);
  }
});

Deno.test("autotune candidates: texture variants alone on a CPU adapter where they fit", async () => {
  const gpu = await getGpu();
  const names = (p: MatmulProblem, textures = true) =>
    candidateVariants(gpu, p, textures).map((v) => v.name);
  const all = MATMUL_VARIANTS.map((v) => v.name);
  // The GPU gemv variants take x W^T alone (none of these problems).
  const storage = MATMUL_VARIANTS.filter((v) => v.operands === "storage" && !v.gpuOnly);
  const aligned = matmulShapes([64, 64], [64, 64]);
  // The texture gemv variants take M <= 16.
  const fitting = all.filter((n) => !n.startsWith("texture_gemv") && !n.startsWith("gemv_"));
  assertEquals(
    names(aligned),
    gpu.summary.isFallback ? fitting.filter((n) => n.startsWith("texture_")) : fitting,
  );
  assertEquals(names(aligned, false), storage.map((v) => v.name));
  // N = 63: neither texture nor vec4 variants fit, every scalar storage variant is a candidate.
  assertEquals(
    names(matmulShapes([64, 64], [64, 63])),
    storage.filter((v) => !v.alignedOperands).map((v) => v.name),
  );
  // A decode product x W^T: the GPU gemv variants are candidates on GPUs only.
  const decode = matmulShapes([4, 576], [1536, 576], { transB: true });
  const gemvs = (g: typeof gpu) =>
    candidateVariants(g, decode, false).map((v) => v.name).filter((n) => n.startsWith("gemv_"));
  const gpuLike = { ...gpu, summary: { ...gpu.summary, isFallback: false } };
  assertEquals(gemvs({ ...gpu, summary: { ...gpu.summary, isFallback: true } }), []);
  assertEquals(
    gemvs(gpuLike),
    ["gemv_c2", "gemv_c4", "gemv_c8", ...(gpu.hasSubgroups ? ["gemv_sg_c4", "gemv_sg_c8"] : [])],
  );
});

Deno.test("untimed default: textures on a CPU adapter; on a GPU split K for few rows, tiles for A^T and big products", async () => {
  const cpu = await getGpu();
  const gpuLike = { ...cpu, summary: { ...cpu.summary, isFallback: false } };
  const cpuLike = { ...cpu, summary: { ...cpu.summary, isFallback: true } };
  const decode = matmulShapes([1, 576], [1536, 576], { transB: true });
  const gradient = matmulShapes([64, 576], [64, 1536], { transA: true });
  const pick = (
    gpu: typeof cpu,
    p: MatmulProblem,
    textures = true,
    constantB = false,
    cpuThreads = 2,
  ) => heuristicVariant(gpu, p, { textures, constantB, cpuThreads }).name;
  assertEquals(pick(gpuLike, decode), "skinny_4x8");
  assertEquals(pick(gpuLike, gradient), "tiled_vec4_64x64");
  // N = 63: the vec4 tiles do not fit; 65 rows are past the split-K variant.
  assertEquals(pick(gpuLike, matmulShapes([64, 5], [64, 63], { transA: true })), "skinny_4x8");
  const prefill = matmulShapes([1024, 576], [1536, 576], { transB: true });
  assertEquals(pick(gpuLike, prefill), "tiled_8x8_64x64");
  // K = 575: the vec4 tiles do not fit.
  assertEquals(
    pick(gpuLike, matmulShapes([1024, 575], [1536, 575], { transB: true })),
    "regblock_4x16",
  );
  assertEquals(pick(gpuLike, matmulShapes([1024, 64], [64, 64])), "regblock_4x16");
  assertEquals(pick(gpuLike, matmulShapes([65, 5], [5, 63])), "regblock_4x16");
  assertEquals(pick(cpuLike, decode), "texture_4x16");
  assertEquals(pick(cpuLike, decode, false), "regblock_4x16");
  // By a weight (a constant B): the gemv over the packed weight, for one row or two.
  assertEquals(pick(cpuLike, decode, true, true), "texture_gemv_1x16");
  const twoRows = matmulShapes([2, 576], [1536, 576], { transB: true });
  assertEquals(pick(cpuLike, twoRows, true, true), "texture_gemv_2x16");
  // 32 rows: blocks of 16. N = 576 (18 strips of 32 columns): 6 workgroups of 3 strips share
  // two threads evenly, as they do on 16 threads (one round); N = 1536 (48 strips): 4 strips each.
  const rows32 = matmulShapes([32, 576], [576, 576], { transB: true });
  assertEquals(pick(cpuLike, rows32, true, true), "texture_16x12");
  assertEquals(pick(cpuLike, rows32, true, true, 16), "texture_16x12");
  assertEquals(
    pick(cpuLike, matmulShapes([32, 576], [1536, 576], { transB: true }), true, true),
    "texture_16x16",
  );
  assertEquals(pick(gpuLike, decode, true, true), "skinny_4x8");
  // A runtime whose WGSL cannot read storage textures gets no texture variant.
  const noStorageTextures = { ...cpuLike, readsStorageTextures: false };
  assertEquals(pick(noStorageTextures, decode, true, true), "regblock_4x16");
  assertEquals(
    matmulVariant("texture_32x16").misfit(noStorageTextures, prefill),
    "expected WGSL to read storage textures (readonly_and_readwrite_storage_textures), which " +
      "this runtime lacks",
  );
});

Deno.test("balanced column quads: the fewest strips per thread, ties to more quads", () => {
  // Strips of 32 columns: 18 (N = 576), 6 (192), 48 (1536), 28 (896), 4 (128), 1 (N = 5).
  const all = [4, 3, 2];
  assertEquals(balancedColumnQuads(576, 2, all), 3); // 4: 12 strips per thread, 3: 9, 2: 10
  assertEquals(balancedColumnQuads(192, 2, all), 3); // 4: 4, 3: 3, 2: 4
  assertEquals(balancedColumnQuads(1536, 2, all), 4); // 24 each
  assertEquals(balancedColumnQuads(896, 2, all), 2); // 4: 16, 3: 15, 2: 14
  assertEquals(balancedColumnQuads(128, 2, all), 2); // 4: 4, 3: 3 (3 + 1 strips), 2: 2
  assertEquals(balancedColumnQuads(5, 2, all), 2); // one strip: the fewest quads compute least
  assertEquals(balancedColumnQuads(576, 2, [4]), 4);
});

Deno.test("autotune: the default stays unless another candidate is more than 5% faster", () => {
  assertEquals(pickFastest({ x: 104, y: 100, z: 130 }, "x"), "x");
  assertEquals(pickFastest({ x: 106, y: 100, z: 130 }, "x"), "y");
  assertEquals(pickFastest({ x: 90, y: 100 }, "x"), "x");
  assertEquals(pickFastest({ y: 100, z: 99 }, "x"), "z"); // the default failed to run
});

Deno.test({
  name: "autotune: picks a candidate, remembers it and saves it to the cache file",
  ignore: !autotuneEnabled(), // RFT_AUTOTUNE=0 turns timing off
}, async () => {
  const dir = await Deno.makeTempDir();
  const cacheFile = `${dir}/autotune.json`;
  const gpu = await getGpu();
  const p = matmulShapes([8, 8], [8, 8]);
  const [a, b, c] = [0, 1, 2].map(() =>
    gpu.device.createBuffer({ size: 256, usage: GPUBufferUsage.STORAGE })
  );
  const storageOnly = {
    gpu,
    texture(): never {
      throw new Error("a storage variant asked for a texture");
    },
    variableTexture(): never {
      throw new Error("a storage variant asked for a texture");
    },
    inputTexture(): never {
      throw new Error("a storage variant asked for a texture");
    },
  };
  const [launch] = matmulLaunch(storageOnly, matmulVariant("regblock_32x16"), p, a, b, c);
  const candidate = (name: string) => ({
    name,
    prepare: async () => [
      await prepareDispatch(gpu, launch.spec, launch.buffers, launch.params, launch.workgroups),
    ],
  });
  const request = {
    op: "test-op",
    shapeClass: crypto.randomUUID(),
    candidates: [candidate("x"), candidate("y")],
    fallback: "x",
    cacheFile,
  };
  try {
    const choice = await autotune(gpu, request);
    if (choice !== "x" && choice !== "y") throw new Error(`unexpected choice ${choice}`);
    const entry = autotuneChoices().find((e) => e.shapeClass === request.shapeClass);
    if (entry?.choice !== choice) throw new Error("choice not listed by autotuneChoices()");
    const file = JSON.parse(await Deno.readTextFile(cacheFile));
    const keys = Object.keys(file.entries).filter((k) => k.endsWith(request.shapeClass));
    if (keys.length !== 1) throw new Error(`choice not saved to ${cacheFile}`);
    if ((await autotune(gpu, request)) !== choice) throw new Error("choice not remembered");
    // A new candidate re-opens the measurement; the new entry lists all three.
    const more = { ...request, candidates: [...request.candidates, candidate("z")] };
    const again = await autotune(gpu, more);
    const remeasured = autotuneChoices().find((e) => e.shapeClass === request.shapeClass);
    assertEquals(remeasured?.candidates, ["x", "y", "z"]);
    assertEquals(remeasured?.choice, again);
  } finally {
    [a, b, c].forEach((x) => x.destroy());
    await Deno.remove(dir, { recursive: true });
  }
});
