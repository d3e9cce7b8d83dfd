// Matmul: every kernel variant against the f64 CPU reference on odd shapes (all transpose
// combinations, shared and per-batch operands), backward against finite differences, shape
// errors, and the autotuner's cache. Variants are forced by name, so no result depends on timing.

import { autotune, autotuneChoices, autotuneEnabled } from "../../src/gpu/autotune.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { prepareDispatch } from "../../src/gpu/dispatch.ts";
import { Graph } from "../../src/graph/graph.ts";
import type { Tensor } from "../../src/graph/tensor.ts";
import { matmul, matmulShapes } from "../../src/ops/matmul.ts";
import { MATMUL_VARIANTS } from "../../src/ops/matmul_variants.ts";
import { matmulRef } from "../../src/reference/matmul.ts";
import { assertClose } from "../_assert_close.ts";
import { checkGradients, randomInput, runOps, type TestInput } from "../_harness.ts";

interface Case {
  label: string;
  a: number[];
  b: number[];
  transA?: boolean;
  transB?: boolean;
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

for (const variant of MATMUL_VARIANTS) {
  Deno.test(`matmul ${variant.name}: forward matches CPU on odd shapes`, async () => {
    const inputs = CASES.flatMap((c, i) => [
      randomInput(c.a, 2 * i + 1),
      randomInput(c.b, 2 * i + 2),
    ]);
    const build = (...xs: Tensor[]) =>
      CASES.map((c, i) => matmul(xs[2 * i], xs[2 * i + 1], { ...c, variant: variant.name }));
    const outputs = await runOps(inputs, build);
    CASES.forEach((c, i) => {
      const ref = matmulRef(inputs[2 * i].data, inputs[2 * i + 1].data, matmulShapes(c.a, c.b, c));
      assertClose(outputs[i], ref, { atol: 1e-5, rtol: 1e-5, label: `${variant.name} ${c.label}` });
    });
  });
}

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

for (const variant of ["regblock_16x16", "tiled_32x32"]) {
  for (const c of GRAD_CASES) {
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

Deno.test({
  name: "autotune: picks a candidate, remembers it and saves it to the cache file",
  ignore: !autotuneEnabled(), // RFT_AUTOTUNE=0 turns timing off
}, async () => {
  const dir = await Deno.makeTempDir();
  const cacheFile = `${dir}/autotune.json`;
  const gpu = await getGpu();
  const variant = MATMUL_VARIANTS[0];
  const p = matmulShapes([8, 8], [8, 8]);
  const buffers = [0, 1, 2].map(() =>
    gpu.device.createBuffer({ size: 256, usage: GPUBufferUsage.STORAGE })
  );
  const candidate = (name: string) => ({
    name,
    prepare: async () => [
      await prepareDispatch(gpu, variant.spec(p), buffers, new ArrayBuffer(32), [1, 1, 1]),
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
  } finally {
    buffers.forEach((x) => x.destroy());
    await Deno.remove(dir, { recursive: true });
  }
});
