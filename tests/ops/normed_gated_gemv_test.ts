// The normed gated gemv (RMSNorm, gate and up products, gated activation in one pass) against the
// f64 CPU reference on odd shapes, on the CPU adapters' path (packed textures) and the GPUs' (the
// GEMV kernels, up to 8 rows): K and N multiples of 4 but not of the 32-column strips or the 64
// columns of a workgroup, one to three rows, weights as variables (packed once, shared with a
// plain product of the same weight) and as graph inputs (packed every run), SiLU and GELU gates;
// on GPUs also bf16 and f16 weights as stored (against the rounded weights).

import { getGpu } from "../../src/gpu/device.ts";
import { compileGraph, type Feed } from "../../src/graph/executable.ts";
import { Graph } from "../../src/graph/graph.ts";
import type { Tensor, Variable } from "../../src/graph/tensor.ts";
import type { GateKind } from "../../src/ops/gated.ts";
import { matmul, matmulShapes } from "../../src/ops/matmul.ts";
import { normedGatedGemv, normedGatedGemvMisfit } from "../../src/ops/normed_gated_gemv.ts";
import { matmulRef } from "../../src/reference/matmul.ts";
import { normedGatedGemvRef } from "../../src/reference/normed_gated_gemv.ts";
import { uniformArray } from "../../src/util/random.ts";
import assert from "node:assert/strict";
import { assertEquals, assertThrows } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { makeVariable } from "../_variable.ts";
import { storedValues, storedWeight } from "../_half_weight.ts";

interface Case {
  label: string;
  /** h's shape [..., K]. */
  h: number[];
  n: number;
  kind: GateKind;
  /** The weights as variables (else graph inputs). */
  weights: boolean;
  /** Added to the norm's weight (Gemma's 1 + gamma). */
  weightOffset?: number;
}

const CASES: Case[] = [
  { label: "one row, N within one strip pair", h: [1, 1, 52], n: 44, kind: "silu", weights: true },
  { label: "three rows, N off the strips", h: [3, 1, 36], n: 100, kind: "silu", weights: true },
  { label: "one row, inputs, GELU", h: [1, 20], n: 8, kind: "gelu", weights: false },
  { label: "two rows, long K", h: [2, 1000], n: 140, kind: "silu", weights: false },
  {
    label: "one row, Gemma's 1 + gamma, GELU",
    h: [1, 1, 20],
    n: 24,
    kind: "gelu",
    weights: true,
    weightOffset: 1,
  },
];

// A large eps, so a kernel that drops or misreads it fails.
const EPS = 0.3;

/**
 * f32 against f64 for sums of K products: the gate and up sums (|values| up to ~sqrt(K)) carry
 * rounding of ~K ulps at worst, which their product multiplies. A stale or misread weight is off
 * by O(1).
 */
const tolerance = (k: number) => ({ atol: 2e-6 * k, rtol: 2e-5 });

Deno.test("normed gated gemv matches the CPU reference on odd shapes", async () => {
  // The CPU adapters' path (packed weight textures), on any adapter: presented as a CPU one.
  const base = await getGpu();
  const gpu = { ...base, summary: { ...base.summary, isFallback: true } };
  const misfit = normedGatedGemvMisfit(gpu, 44, 52);
  assertEquals(misfit, undefined, "the test adapter runs it");
  const g = new Graph();
  const feeds = new Map<Tensor, Feed>();
  const variables: Variable[] = [];
  const data = CASES.map((c, i) => {
    const k = c.h[c.h.length - 1];
    return {
      h: uniformArray(c.h.reduce((a, b) => a * b, 1), 10 + i, -2, 2),
      gamma: uniformArray(k, 20 + i, -1.5, 1.5),
      gate: uniformArray(c.n * k, 30 + i),
      up: uniformArray(c.n * k, 40 + i),
    };
  });
  const outs: Tensor[] = [];
  const plain: Tensor[] = [];
  const hs: Tensor[] = [];
  const ups: Tensor[] = [];
  for (const [i, c] of CASES.entries()) {
    const k = c.h[c.h.length - 1];
    const h = g.input(c.h, "f32", `h${i}`);
    const gamma = g.input([k], "f32", `gamma${i}`);
    feeds.set(h, data[i].h).set(gamma, data[i].gamma);
    const weight = async (name: "gate" | "up") => {
      if (!c.weights) {
        const t = g.input([c.n, k], "f32", `${name}${i}`);
        feeds.set(t, data[i][name]);
        return t;
      }
      const v = await makeVariable(`${name}${i}`, [c.n, k], data[i][name]);
      variables.push(v);
      return g.variable(v);
    };
    const [gate, up] = [await weight("gate"), await weight("up")];
    hs.push(h);
    ups.push(up);
    const attrs = { eps: EPS, gate: c.kind, weightOffset: c.weightOffset };
    outs.push(normedGatedGemv(h, gamma, gate, up, attrs));
    // A plain product by the same gate weight reads the same packed texture.
    plain.push(matmul(h, gate, { transB: true, variant: "texture_gemv_1x16" }));
  }
  const exe = await compileGraph(gpu, [...outs, ...plain], "normed gated gemv");
  try {
    await exe.run(feeds);
    const got = await exe.read([...outs, ...plain]);
    CASES.forEach((c, i) => {
      const k = c.h[c.h.length - 1];
      const want = normedGatedGemvRef(data[i].h, data[i].gamma, data[i].gate, data[i].up, {
        k,
        n: c.n,
        eps: EPS,
        weightOffset: c.weightOffset,
        kind: c.kind,
      });
      assertEquals(got[i].length, want.length, c.label);
      assertClose(got[i], want, { ...tolerance(k), label: c.label });
      const shapes = matmulShapes(c.h, [c.n, k], { transB: true });
      assertClose(got[CASES.length + i], matmulRef(data[i].h, data[i].gate, shapes), {
        atol: 2e-5,
        rtol: 2e-5,
        label: `plain product ${c.label}`,
      });
    });
    // One pack per weight variable (the gate's texture serves both products); an input weight
    // is packed for each op that reads it.
    const packs = exe.dispatches.filter((d) => d.label.startsWith("pack_weight")).length;
    assertEquals(packs, CASES.reduce((sum, c) => sum + (c.weights ? 2 : 3), 0));
    // A second run with new rows and new input weights: the variables' packing is kept, the
    // inputs' is redone.
    CASES.forEach((c, i) => {
      data[i].h = uniformArray(data[i].h.length, 50 + i, -3, 3);
      feeds.set(hs[i], data[i].h);
      if (!c.weights) {
        data[i].up = uniformArray(data[i].up.length, 60 + i);
        feeds.set(ups[i], data[i].up);
      }
    });
    await exe.run(feeds);
    const again = await exe.read(outs);
    CASES.forEach((c, i) => {
      const want = normedGatedGemvRef(data[i].h, data[i].gamma, data[i].gate, data[i].up, {
        k: c.h[c.h.length - 1],
        n: c.n,
        eps: EPS,
        weightOffset: c.weightOffset,
        kind: c.kind,
      });
      assertClose(again[i], want, {
        ...tolerance(c.h[c.h.length - 1]),
        label: `second run ${c.label}`,
      });
    });
  } finally {
    exe.destroy();
    variables.forEach((v) => v.buffer.destroy());
  }
});

Deno.test("normed gated gemv: what each input contributes shows in the output", async () => {
  // Sabotage: a reference that drops the norm's weight, swaps gate and up, or forgets eps
  // differs from the kernel's output by far more than the tolerance.
  const gpu = await getGpu();
  const [k, n] = [24, 36];
  const data = {
    h: uniformArray(k, 1, -2, 2),
    gamma: uniformArray(k, 2, -1.5, 1.5),
    gate: uniformArray(n * k, 3),
    up: uniformArray(n * k, 4),
  };
  const g = new Graph();
  const [h, gamma] = [g.input([1, k], "f32", "h"), g.input([k], "f32", "gamma")];
  const [gate, up] = [g.input([n, k], "f32", "gate"), g.input([n, k], "f32", "up")];
  const out = normedGatedGemv(h, gamma, gate, up, { eps: EPS, gate: "silu" });
  const exe = await compileGraph(gpu, [out], "normed gated gemv sabotage");
  try {
    await exe.run(
      new Map([[h, data.h], [gamma, data.gamma], [gate, data.gate], [up, data.up]]),
    );
    const [got] = await exe.read([out]);
    const ref = (o: Partial<typeof data> & { eps?: number }) =>
      normedGatedGemvRef(
        o.h ?? data.h,
        o.gamma ?? data.gamma,
        o.gate ?? data.gate,
        o.up ?? data.up,
        {
          k,
          n,
          eps: o.eps ?? EPS,
          kind: "silu",
        },
      );
    assertClose(got, ref({}), { atol: 2e-5, rtol: 2e-5 });
    const far = (want: Float64Array) =>
      want.some((v, i) => Math.abs(v - got[i]) > 1e-3 * (1 + Math.abs(v)));
    assert(far(ref({ gamma: new Float32Array(k).fill(1) })), "gamma matters");
    assert(far(ref({ gate: data.up, up: data.gate })), "gate and up are not interchangeable");
    assert(far(ref({ eps: 0 })), "eps matters");
  } finally {
    exe.destroy();
  }
});

Deno.test("normed gated gemv on GPUs reads bf16 and f16 weights as stored; CPU adapters take f32", async () => {
  const cpu = await getGpu();
  const gpu = { ...cpu, summary: { ...cpu.summary, isFallback: false } };
  const cpuLike = { ...cpu, summary: { ...cpu.summary, isFallback: true } };
  assertEquals(
    normedGatedGemvMisfit(cpuLike, 44, 48, "f16"),
    "expected f32 weights on a CPU adapter, received f16",
  );
  const [rows, k, n] = [2, 48, 20];
  for (const [i, format] of (["bf16", "f16"] as const).entries()) {
    assertEquals(normedGatedGemvMisfit(gpu, n, k, format), undefined);
    const h = uniformArray(rows * k, 80 + i, -2, 2);
    const gamma = uniformArray(k, 81 + i, -1.5, 1.5);
    const values = [uniformArray(n * k, 82 + i), uniformArray(n * k, 83 + i)];
    const weights = await Promise.all(values.map((v) => storedWeight(gpu, [n, k], v, format)));
    const g = new Graph();
    const [ht, gammaT] = [g.input([rows, k]), g.input([k])];
    const [gate, up] = weights.map((w) => g.variable(w));
    const out = normedGatedGemv(ht, gammaT, gate, up, { eps: EPS, gate: "silu" });
    const exe = await compileGraph(gpu, [out], `normed gated gemv, ${format} weights`);
    try {
      await exe.run(new Map([[ht, h], [gammaT, gamma]]));
      const [got] = await exe.read([out]);
      const [wg, wu] = values.map((v) => storedValues(v, format));
      const want = normedGatedGemvRef(h, gamma, wg, wu, { k, n, eps: EPS, kind: "silu" });
      assertClose(got, want, { ...tolerance(k), label: `${format} weights` });
    } finally {
      exe.destroy();
      for (const w of weights) w.buffer.destroy();
    }
  }
});

Deno.test("normed gated gemv refuses weights of the wrong shape and K off a multiple of 4", () => {
  const g = new Graph();
  const h = g.input([1, 12]);
  const gamma = g.input([12]);
  const w = g.input([8, 12]);
  assertThrows(
    () => normedGatedGemv(h, gamma, w, g.input([8, 16]), { eps: 0, gate: "silu" }),
    Error,
    "[N, 12]",
  );
  assertThrows(
    () => normedGatedGemv(h, g.input([8]), w, w, { eps: 0, gate: "silu" }),
    Error,
    "[12]",
  );
  const odd = g.input([1, 10]);
  const w10 = g.input([8, 10]);
  assertThrows(
    () => normedGatedGemv(odd, g.input([10]), w10, w10, { eps: 0, gate: "silu" }),
    Error,
    "multiples of 4",
  );
});

Deno.test("normed gated gemv on GPUs: the GEMV kernels match CPU on up to 8 rows", async () => {
  // The GPU path (gemv.ts, lane sums in workgroup memory and, where subgroups work, by subgroup
  // sums) run here by presenting the adapter as a GPU; Gemma's norm weight offset in one case.
  const cpu = await getGpu();
  const cases = [
    { rows: 1, k: 52, n: 44, kind: "silu" as const },
    { rows: 3, k: 36, n: 100, kind: "gelu" as const, weightOffset: 1 },
    { rows: 8, k: 1000, n: 140, kind: "silu" as const },
  ];
  for (const hasSubgroups of cpu.hasSubgroups ? [false, true] : [false]) {
    const gpu = { ...cpu, hasSubgroups, summary: { ...cpu.summary, isFallback: false } };
    assertEquals(normedGatedGemvMisfit(gpu, 44, 52), undefined, "GPUs run it");
    assertEquals(
      normedGatedGemvMisfit(gpu, 44, 50),
      "expected K a multiple of 4 for f32 weights, received 50",
    );
    assertEquals(
      normedGatedGemvMisfit(gpu, 44, 52, "bf16"),
      "expected K a multiple of 8 for bf16 weights, received 52",
    );
    for (const [i, c] of cases.entries()) {
      const data = [
        uniformArray(c.rows * c.k, 70 + i, -2, 2),
        uniformArray(c.k, 71 + i, -1.5, 1.5),
        uniformArray(c.n * c.k, 72 + i),
        uniformArray(c.n * c.k, 73 + i),
      ];
      const g = new Graph();
      const xs = [[c.rows, c.k], [c.k], [c.n, c.k], [c.n, c.k]].map((s) => g.input(s));
      const attrs = { eps: EPS, gate: c.kind, weightOffset: c.weightOffset };
      const out = normedGatedGemv(xs[0], xs[1], xs[2], xs[3], attrs);
      const exe = await compileGraph(gpu, [out], "normed gated gemv on a GPU");
      try {
        const kernel = hasSubgroups ? "gemv_subgroups" : "gemv:";
        assert(exe.dispatches.every((d) => d.label.startsWith(kernel)), `one ${kernel} launch`);
        await exe.run(new Map(xs.map((x, j) => [x, data[j]])));
        const [got] = await exe.read([out]);
        const want = normedGatedGemvRef(data[0], data[1], data[2], data[3], {
          k: c.k,
          n: c.n,
          eps: EPS,
          weightOffset: c.weightOffset,
          kind: c.kind,
        });
        assertClose(got, want, {
          ...tolerance(c.k),
          label: `${c.rows} rows, subgroups ${hasSubgroups}`,
        });
      } finally {
        exe.destroy();
      }
    }
  }
});
