// Prologue products: RMSNorm or SwiGLU computed in the fill of A's texture, against the f64 CPU
// reference on odd shapes (rows and columns off every tile; K a multiple of 4, as the fill reads
// four at a time), with a weight variable (packed B) and an input B, accumulating or not, through
// texture variants (the prologue in the fill) and variants that read A's buffer (the prologue as
// its own pass); the q, k and v products of one norm share one fill.

import { getGpu } from "../../src/gpu/device.ts";
import { compileGraph } from "../../src/graph/executable.ts";
import { Graph } from "../../src/graph/graph.ts";
import { matmul, matmulShapes } from "../../src/ops/matmul.ts";
import {
  type APrologue,
  fillsTakePrologues,
  prologueMatmul,
  prologueMatmulAccumulate,
} from "../../src/ops/prologue_matmul.ts";
import { matmulRef } from "../../src/reference/matmul.ts";
import { prologueMatmulRef } from "../../src/reference/prologue_matmul.ts";
import { uniformArray } from "../../src/util/random.ts";
import { assertEquals, assertThrows } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { makeVariable } from "../_variable.ts";

// A large eps, so a kernel that drops or misreads it fails.
const RMS: APrologue = { kind: "rms_norm", eps: 0.3 };
// Gemma's RMSNorm, scaling by 1 + weight.
const GEMMA_RMS: APrologue = { kind: "rms_norm", eps: 0.3, weightOffset: 1 };
const SWIGLU: APrologue = { kind: "gated", gate: "silu" };

interface Case {
  label: string;
  prologue: APrologue;
  x: number[];
  /** B stored [N, K] (transB) or [K, N]. */
  b: number[];
  transB: boolean;
  /** B a weight variable (read packed by the texture variants) rather than an input. */
  weight: boolean;
  accumulate?: boolean;
}

const CASES: Case[] = [
  {
    label: "rms_norm, weight B^T",
    prologue: RMS,
    x: [37, 52],
    b: [29, 52],
    transB: true,
    weight: true,
  },
  {
    label: "rms_norm, batched, input B",
    prologue: RMS,
    x: [3, 7, 12],
    b: [12, 20],
    transB: false,
    weight: false,
  },
  {
    label: "gated, weight B^T, accumulate",
    prologue: SWIGLU,
    x: [37, 36],
    b: [29, 36],
    transB: true,
    weight: true,
    accumulate: true,
  },
  {
    label: "gated, texture over two rows",
    prologue: SWIGLU,
    x: [5, 3, 2400],
    b: [7, 2400],
    transB: true,
    weight: true,
  },
];

// Gemma's RMSNorm on the first case's layout, smaller.
CASES.splice(1, 0, {
  ...CASES[0],
  label: "rms_norm with weight offset 1, weight B^T",
  prologue: GEMMA_RMS,
  x: [9, 20],
  b: [13, 20],
});

for (const variant of ["texture_16x12", "texture_4x16", "regblock_16x16", "texture_gemv_2x16"]) {
  Deno.test(`prologue matmul via ${variant} matches the CPU reference`, async () => {
    const gpu = await getGpu();
    const g = new Graph();
    const cases = variant.startsWith("texture_gemv")
      ? CASES.filter((c) => c.weight).map((c) => ({ ...c, x: [5, c.x[c.x.length - 1]] }))
      : CASES;
    const data = cases.map((c, i) => {
      const k = c.x[c.x.length - 1];
      const xs = c.x.reduce((a, b) => a * b, 1);
      const aux = c.prologue.kind === "rms_norm" ? k : xs;
      const rows = xs / k;
      const n = c.transB ? c.b[0] : c.b[1];
      return {
        x: uniformArray(xs, 10 + i, -2, 2),
        aux: uniformArray(aux, 20 + i, -1.5, 1.5),
        b: uniformArray(c.b[0] * c.b[1], 30 + i),
        acc: uniformArray(rows * n, 40 + i),
      };
    });
    const weights = await Promise.all(
      cases.map((c, i) => c.weight ? makeVariable(`w${i}`, c.b, data[i].b) : undefined),
    );
    const feeds = new Map();
    const outs = cases.map((c, i) => {
      const x = g.input(c.x, "f32", `x${i}`);
      const aux = g.input([data[i].aux.length], "f32", `aux${i}`);
      const auxShaped = c.prologue.kind === "rms_norm" ? aux : g.input(c.x, "f32", `up${i}`);
      feeds.set(x, data[i].x);
      feeds.set(auxShaped, data[i].aux);
      const w = weights[i];
      const b = w ? g.variable(w) : g.input(c.b, "f32", `b${i}`);
      if (!w) feeds.set(b, data[i].b);
      const options = { transB: c.transB, variant };
      if (!c.accumulate) return prologueMatmul(x, auxShaped, b, c.prologue, options);
      const shape = matmulShapes(c.x, c.b, c).shape;
      const acc = g.input(shape, "f32", `acc${i}`);
      feeds.set(acc, data[i].acc);
      return prologueMatmulAccumulate(acc, x, auxShaped, b, c.prologue, options);
    });
    const exe = await compileGraph(gpu, outs, `prologue ${variant}`);
    try {
      await exe.run(feeds);
      const got = await exe.read(outs);
      cases.forEach((c, i) => {
        const shapes = matmulShapes(c.x, c.b, c);
        let want = prologueMatmulRef(data[i].x, data[i].aux, data[i].b, c.prologue, shapes);
        if (c.accumulate) want = want.map((v, j) => v + data[i].acc[j]);
        assertClose(got[i], want, { atol: 2e-5, rtol: 2e-5, label: `${variant} ${c.label}` });
      });
      const fills = exe.dispatches.filter((d) => d.label.startsWith("prologue_fill")).length;
      assertEquals(
        fills,
        variant.startsWith("texture_") && !variant.includes("gemv") ? cases.length : 0,
      );
    } finally {
      exe.destroy();
      weights.forEach((w) => w?.buffer.destroy());
    }
  });
}

Deno.test("prologue matmul: products of one norm share one fill; a plain product of x does not", async () => {
  const gpu = await getGpu();
  const g = new Graph();
  const [rows, k] = [33, 20];
  const x = g.input([rows, k], "f32", "x");
  const norm = g.input([k], "f32", "norm");
  const other = g.input([k], "f32", "other_norm");
  const ns = [24, 9, 9, 17];
  const bs = ns.map((n, i) => g.input([n, k], "f32", `b${i}`));
  const variant = "texture_8x16";
  const outs = [
    ...bs.slice(0, 3).map((b) => prologueMatmul(x, norm, b, RMS, { transB: true, variant })),
    prologueMatmul(x, other, bs[3], RMS, { transB: true, variant }),
    matmul(x, bs[3], { transB: true, variant }),
  ];
  const data = {
    x: uniformArray(rows * k, 1, -2, 2),
    norm: uniformArray(k, 2),
    other: uniformArray(k, 3),
    bs: ns.map((n, i) => uniformArray(n * k, 4 + i)),
  };
  const exe = await compileGraph(gpu, outs, "shared fills");
  try {
    await exe.run(
      new Map([
        [x, data.x],
        [norm, data.norm],
        [other, data.other],
        ...bs.map((b, i) => [b, data.bs[i]] as const),
      ]),
    );
    const got = await exe.read(outs);
    const fills = exe.dispatches.filter((d) => d.label.startsWith("prologue_fill")).length;
    assertEquals(fills, 2, "one fill per (input, norm weight)");
    const shapes = (n: number) => matmulShapes([rows, k], [n, k], { transB: true });
    const norms = [data.norm, data.norm, data.norm, data.other];
    for (let i = 0; i < 4; i++) {
      const want = prologueMatmulRef(data.x, norms[i], data.bs[i], RMS, shapes(ns[i]));
      assertClose(got[i], want, { atol: 2e-5, rtol: 2e-5, label: `product ${i}` });
    }
    assertClose(got[4], matmulRef(data.x, data.bs[3], shapes(ns[3])), {
      atol: 2e-5,
      rtol: 2e-5,
      label: "plain product of x",
    });
  } finally {
    exe.destroy();
  }
});

Deno.test("prologue matmul: rows not a multiple of 4, a wrong aux shape and A^T are refused", () => {
  const g = new Graph();
  const b = g.input([8, 6], "f32", "b");
  assertThrows(
    () => prologueMatmul(g.input([5, 6]), g.input([6]), b, RMS, { transB: true }),
    Error,
    "expected rows of a multiple of 4, received 6",
  );
  const x = g.input([5, 8]);
  assertThrows(
    () => prologueMatmul(x, g.input([5]), g.input([3, 8]), RMS, { transB: true }),
    Error,
    "expected the second operand of shape [8]",
  );
  assertThrows(
    () => prologueMatmul(x, g.input([5, 8]), g.input([3, 8]), SWIGLU, { transA: true }),
    Error,
    "expected A not transposed",
  );
});

Deno.test("prologue matmul: fills take prologues on CPU adapters above the gemv's rows", async () => {
  const gpu = await getGpu();
  const cpu = gpu.summary.isFallback && gpu.readsStorageTextures;
  assertEquals([fillsTakePrologues(gpu, 16), fillsTakePrologues(gpu, 17)], [false, cpu]);
});
