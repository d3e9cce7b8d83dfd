/**
 * Causal self-attention with the register-blocked kernels (the CPU adapters' choice): forward
 * against the f64 CPU reference on odd shapes (T, D not multiples of 4), grouped-query heads
 * (Hkv = H, H/2, 1), packed segments, padding, rows spanning several key tiles and workgroups,
 * sliding windows and large scores; GQA against explicitly repeated kv heads; backward (q, k, v)
 * against finite differences, exact zeros for padding, determinism; the GPU kernel layout (run
 * here on the CPU adapter) against the CPU one; shape and option errors.
 * Head dims that are multiples of 4 run the texture-operand kernels on CPU adapters (the CI's),
 * the others the storage ones; both are covered. The GPU kernels: flash_attention_test.ts.
 */

import { getGpu } from "../../src/gpu/device.ts";
import { grad } from "../../src/graph/autodiff.ts";
import { compileGraph } from "../../src/graph/executable.ts";
import { Graph } from "../../src/graph/graph.ts";
import { shapeSize, type Tensor } from "../../src/graph/tensor.ts";
import { causalAttention } from "../../src/ops/attention.ts";
import type { AttentionDims } from "../../src/ops/attention_register.ts";
import { causalAttentionRef } from "../../src/reference/attention.ts";
import { uniformArray } from "../../src/util/random.ts";
import { assertClose } from "../_assert_close.ts";
import { assertEquals, assertThrows } from "../_asserts.ts";
import { checkGradients, runOps, type TestInput } from "../_harness.ts";
import { type AttentionCase as Case, caseInputs, runs, scattered } from "./_attention_cases.ts";

/** The op on `c`'s window with the register kernels (the CPU adapters' choice anyway). */
function attentionOf(c: Case) {
  return (q: Tensor, k: Tensor, v: Tensor, ids: Tensor) =>
    causalAttention(q, k, v, ids, { kernel: "register", window: c.window });
}

/** The reference on `c`'s shape and window, with inputs as the harness passes them. */
function reference(c: Case): (...xs: ArrayLike<number>[]) => Float64Array {
  return (q, k, v, ids) => causalAttentionRef(q, k, v, ids, c.shape, undefined, c.window);
}

const FORWARD_CASES: Case[] = [
  {
    label: "one segment per row, H=4 Hkv=2, T=13 D=6",
    shape: { batch: 2, seq: 13, heads: 4, kvHeads: 2, headDim: 6 },
    segments: [runs([0, 13]), runs([5, 13])],
  },
  {
    label: "packed and padded, H=4 Hkv=1, T=37 D=10",
    shape: { batch: 2, seq: 37, heads: 4, kvHeads: 1, headDim: 10 },
    segments: [
      runs([0, 3], [1, 2], [2, 4], [3, 20], [4, 8]),
      runs([7, 30], [-1, 7]),
    ],
  },
  {
    label: "left padding, scattered segments, H=4 Hkv=4, T=37 D=6",
    shape: { batch: 2, seq: 37, heads: 4, kvHeads: 4, headDim: 6 },
    segments: [runs([-1, 5], [0, 32]), scattered(37, 7)],
  },
  {
    label: "rows over several key tiles and workgroups, H=4 Hkv=2, T=70 D=10",
    shape: { batch: 2, seq: 70, heads: 4, kvHeads: 2, headDim: 10 },
    segments: [runs([0, 70]), runs([0, 21], [1, 40], [-2, 9])],
  },
  {
    label: "one head, D=1, T=1",
    shape: { batch: 1, seq: 1, heads: 1, kvHeads: 1, headDim: 1 },
    segments: [[0]],
  },
  {
    label: "head_dim 130, H=2 Hkv=1, T=20",
    shape: { batch: 1, seq: 20, heads: 2, kvHeads: 1, headDim: 130 },
    segments: [runs([0, 11], [1, 9])],
  },
  {
    label: "texture operands: packed and padded, H=4 Hkv=2, T=37 D=8",
    shape: { batch: 2, seq: 37, heads: 4, kvHeads: 2, headDim: 8 },
    segments: [runs([0, 3], [1, 2], [2, 24], [3, 8]), runs([-1, 5], [7, 25], [-1, 7])],
  },
  {
    label: "texture operands: several key tiles and workgroups, H=6 Hkv=2, T=70 D=12",
    shape: { batch: 2, seq: 70, heads: 6, kvHeads: 2, headDim: 12 },
    segments: [runs([0, 70]), scattered(70, 11)],
  },
  {
    label: "texture operands: head_dim 132, H=2 Hkv=1, T=21",
    shape: { batch: 1, seq: 21, heads: 2, kvHeads: 1, headDim: 132 },
    segments: [runs([0, 12], [1, 9])],
  },
  {
    label: "large scores (|score| median 22, max 118), H=4 Hkv=2, T=37 D=10",
    shape: { batch: 1, seq: 37, heads: 4, kvHeads: 2, headDim: 10 },
    segments: [runs([0, 20], [1, 17])],
    qk: 10,
  },
];

Deno.test("causalAttention: forward matches CPU (odd, packed, padded, long, sharp)", async () => {
  for (const [i, c] of FORWARD_CASES.entries()) {
    const inputs = caseInputs(c, 500 + 10 * i);
    const [y] = await runOps(inputs, attentionOf(c));
    if (!y.every(Number.isFinite)) throw new Error(`${c.label}: non-finite output`);
    const expected = reference(c)(...inputs.map((x) => x.data));
    assertClose(y, expected, { label: c.label, atol: 1e-5, rtol: 1e-4 });
  }
});

Deno.test("causalAttention: padding rows are exactly 0", async () => {
  const c = FORWARD_CASES[1];
  const { seq, heads, headDim } = c.shape;
  const [y] = await runOps(caseInputs(c, 600), attentionOf(c));
  const row = heads * headDim;
  const padded = y.subarray((seq + 30) * row, 2 * seq * row); // batch row 1, t >= 30
  assertEquals([...padded], new Array(7 * row).fill(0), "padding rows");
});

Deno.test("causalAttention: grouped kv heads equal repeated kv heads (HF repeat_kv)", async () => {
  const shape: AttentionDims = { batch: 2, seq: 19, heads: 6, kvHeads: 2, headDim: 5 };
  const c: Case = { label: "gqa", shape, segments: [runs([0, 19]), runs([0, 9], [1, 10])] };
  const [q, k, v, ids] = caseInputs(c, 610);
  const { batch, seq, heads, kvHeads, headDim } = shape;
  // kv head floor(h / group) copied to query head h.
  const repeat = (x: TestInput): TestInput => {
    const out = new Float32Array(batch * seq * heads * headDim);
    for (let row = 0; row < batch * seq; row++) {
      for (let h = 0; h < heads; h++) {
        const from = (row * kvHeads + Math.floor(h / (heads / kvHeads))) * headDim;
        out.set(x.data.subarray(from, from + headDim), (row * heads + h) * headDim);
      }
    }
    return { shape: [batch, seq, heads, headDim], data: out };
  };
  const [grouped] = await runOps([q, k, v, ids], attentionOf(c));
  const [repeated] = await runOps([q, repeat(k), repeat(v), ids], attentionOf(c));
  assertClose(grouped, repeated, { label: "grouped vs repeated", atol: 1e-6, rtol: 1e-6 });
});

Deno.test("causalAttention: the scale option multiplies q.k", async () => {
  const c: Case = {
    label: "scale 0.7",
    shape: { batch: 1, seq: 9, heads: 2, kvHeads: 1, headDim: 3 },
    segments: [runs([0, 4], [1, 5])],
  };
  const inputs = caseInputs(c, 620);
  const [y] = await runOps(inputs, (q, k, v, ids) => causalAttention(q, k, v, ids, { scale: 0.7 }));
  const [q, k, v, ids] = inputs.map((x) => x.data);
  assertClose(y, causalAttentionRef(q, k, v, ids, c.shape, 0.7), {
    label: c.label,
    atol: 1e-6,
    rtol: 1e-5,
  });
});

const GRAD_CASES: Case[] = [
  {
    label: "packed and padded, H=4 Hkv=2, T=13 D=6",
    shape: { batch: 2, seq: 13, heads: 4, kvHeads: 2, headDim: 6 },
    segments: [runs([0, 5], [1, 8]), runs([3, 10], [-1, 3])],
  },
  {
    label: "several key tiles, H=4 Hkv=1, T=37 D=6",
    shape: { batch: 1, seq: 37, heads: 4, kvHeads: 1, headDim: 6 },
    segments: [runs([0, 18], [1, 12], [-1, 7])],
  },
  {
    label: "scattered segments, H=2 Hkv=2, T=21 D=10",
    shape: { batch: 1, seq: 21, heads: 2, kvHeads: 2, headDim: 10 },
    segments: [scattered(21, 9)],
  },
  {
    label: "sharp scores, H=2 Hkv=1, T=13 D=10",
    shape: { batch: 1, seq: 13, heads: 2, kvHeads: 1, headDim: 10 },
    segments: [runs([0, 13])],
    qk: 3,
  },
  {
    label: "head_dim 130, H=1 Hkv=1, T=11",
    shape: { batch: 1, seq: 11, heads: 1, kvHeads: 1, headDim: 130 },
    segments: [runs([0, 11])],
  },
  {
    label: "texture operands: packed and padded, H=4 Hkv=2, T=21 D=8",
    shape: { batch: 2, seq: 21, heads: 4, kvHeads: 2, headDim: 8 },
    segments: [runs([0, 6], [1, 15]), runs([-1, 2], [4, 16], [-1, 3])],
  },
  {
    label: "texture operands: several key tiles, sharp scores, H=3 Hkv=3, T=37 D=4",
    shape: { batch: 1, seq: 37, heads: 3, kvHeads: 3, headDim: 4 },
    segments: [scattered(37, 13)],
    qk: 3,
  },
];

Deno.test("causalAttention: a sliding window limits each query to its last keys", async () => {
  // Packed and padded rows longer than the window, storage (D=6) and texture (D=8) operands.
  const cases = [GRAD_CASES[0], GRAD_CASES[5]].map((c) => ({
    ...c,
    label: `window 5: ${c.label}`,
  }));
  for (const [i, c] of cases.entries()) {
    const inputs = caseInputs(c, 640 + 10 * i);
    const [y] = await runOps(
      inputs,
      (q, k, v, ids) => causalAttention(q, k, v, ids, { window: 5 }),
    );
    const [q, k, v, ids] = inputs.map((x) => x.data);
    const want = causalAttentionRef(q, k, v, ids, c.shape, undefined, 5);
    assertClose(y, want, { label: c.label, atol: 1e-6, rtol: 1e-5 });
    const unwindowed = causalAttentionRef(q, k, v, ids, c.shape);
    assertEquals(
      want.some((x, j) => Math.abs(x - unwindowed[j]) > 1e-3),
      true,
      "the window matters",
    );
    await checkGradients({
      label: `${c.label} backward`,
      inputs,
      build: (q, k, v, ids) => causalAttention(q, k, v, ids, { window: 5 }),
      reference: (q, k, v, ids) => causalAttentionRef(q, k, v, ids, c.shape, undefined, 5),
    });
  }
});

Deno.test("causalAttention: a soft cap bends the scores (Gemma 2's), forward and backward", async () => {
  // Sharp scores (|score| up to ~9) under a cap of 2, storage (D=6) and texture (D=8) operands,
  // packed, padded and windowed.
  const cases = [GRAD_CASES[0], GRAD_CASES[5]].map((c) => ({
    ...c,
    qk: 2,
    label: `cap 2: ${c.label}`,
  }));
  for (const [i, c] of cases.entries()) {
    const window = i === 1 ? 5 : 0;
    const options = { softcap: 2, window, scale: 0.9 };
    const inputs = caseInputs(c, 660 + 10 * i);
    const ref = (
      q: ArrayLike<number>,
      k: ArrayLike<number>,
      v: ArrayLike<number>,
      ids: ArrayLike<number>,
    ) => causalAttentionRef(q, k, v, ids, c.shape, 0.9, window, 2);
    const [y] = await runOps(inputs, (q, k, v, ids) => causalAttention(q, k, v, ids, options));
    const [q, k, v, ids] = inputs.map((x) => x.data);
    const want = ref(q, k, v, ids);
    assertClose(y, want, { label: c.label, atol: 1e-6, rtol: 1e-5 });
    const uncapped = causalAttentionRef(q, k, v, ids, c.shape, 0.9, window);
    assertEquals(want.some((x, j) => Math.abs(x - uncapped[j]) > 1e-2), true, "the cap matters");
    await checkGradients({
      label: `${c.label} backward`,
      inputs,
      build: (q, k, v, ids) => causalAttention(q, k, v, ids, options),
      reference: ref,
    });
  }
});

Deno.test("causalAttention: backward (q, k, v) matches finite differences", async () => {
  for (const [i, c] of GRAD_CASES.entries()) {
    await checkGradients({
      label: c.label,
      inputs: caseInputs(c, 700 + 10 * i),
      build: attentionOf(c),
      reference: reference(c),
    });
  }
});

Deno.test("causalAttention: padding gets and gives no gradient; deterministic", async () => {
  // The storage kernels (D=6) and the texture ones (D=8, on CPU adapters).
  for (const headDim of [6, 8]) {
    const c = { ...GRAD_CASES[1], shape: { ...GRAD_CASES[1].shape, headDim } };
    const { seq, heads, kvHeads } = c.shape;
    const inputs = caseInputs(c, 800);
    const seed = uniformArray(seq * heads * headDim, 801);
    const build = (q: Tensor, k: Tensor, v: Tensor, ids: Tensor) => {
      const y = causalAttention(q, k, v, ids, { kernel: "register" });
      return grad(y, [q, k, v], q.graph.constant(seed, y.shape));
    };
    const first = await runOps(inputs, build);
    const second = await runOps(inputs, build);
    first.forEach((g, i) => assertEquals([...g], [...second[i]], `D=${headDim}: gradient ${i}`));
    const [dq, dk, dv] = first;
    const tail = (g: ArrayLike<number>, width: number) =>
      Array.from(g).slice((seq - 7) * width * headDim);
    const zeros = (width: number) => new Array(7 * width * headDim).fill(0);
    assertEquals(tail(dq, heads), zeros(heads), `D=${headDim}: dq of padding`);
    assertEquals(tail(dk, kvHeads), zeros(kvHeads), `D=${headDim}: dk of padding`);
    assertEquals(tail(dv, kvHeads), zeros(kvHeads), `D=${headDim}: dv of padding`);
    if (!dq.some((x) => x !== 0)) throw new Error(`D=${headDim}: dq is all zeros`);
  }
});

Deno.test("causalAttention: the GPU kernel layout gives the CPU layout's results", async () => {
  // The kernels' layout follows the adapter (CPU adapters: one SIMD group of invocations, operands
  // through textures when the head dim is a multiple of 4); this runs the GPU one (storage
  // operands) on the adapter at hand by presenting it as a GPU.
  const base = await getGpu();
  const cases = [
    { c: FORWARD_CASES[3], cpuShader: "attention." },
    { c: FORWARD_CASES[7], cpuShader: "attention_texture." },
  ];
  for (const [n, { c, cpuShader }] of cases.entries()) {
    const inputs = caseInputs(c, 900 + 10 * n);
    const seed = uniformArray(shapeSize(inputs[0].shape), 901 + 10 * n);
    const results = [];
    for (const isFallback of [true, false]) {
      const g = new Graph();
      const xs = inputs.map((x, i) => g.input(x.shape, x.dtype ?? "f32", `x${i}`));
      const y = attentionOf(c)(xs[0], xs[1], xs[2], xs[3]);
      const outputs = [y, ...grad(y, xs.slice(0, 3), g.constant(seed, y.shape))];
      const exe = await compileGraph(
        { ...base, summary: { ...base.summary, isFallback } },
        outputs,
      );
      try {
        const shader = isFallback ? cpuShader : "attention.";
        // Forward, dq, dk and dv (besides the stats, the copy of dv and operand copies).
        const used = exe.dispatches.filter((d) => /^attention(_texture)?\./.test(d.label))
          .map((d) => d.label.startsWith(shader));
        assertEquals(used, new Array(4).fill(true), `${c.label}: every kernel from ${shader}wgsl`);
        await exe.run(new Map(xs.map((x, i) => [x, inputs[i].data])));
        results.push(await exe.read(outputs));
      } finally {
        exe.destroy();
      }
    }
    const [cpuLayout, gpuLayout] = results;
    assertClose(gpuLayout[0], reference(c)(...inputs.map((x) => x.data)), {
      label: `${c.label}: GPU layout forward`,
      atol: 1e-5,
      rtol: 1e-4,
    });
    cpuLayout.forEach((x, i) =>
      assertClose(gpuLayout[i], x, {
        label: `${c.label}: layouts, output ${i}`,
        atol: 1e-6,
        rtol: 1e-5,
      })
    );
  }
});

Deno.test("causalAttention rejects mismatched shapes and dtypes, naming the op", () => {
  const g = new Graph();
  const q = g.input([2, 5, 4, 6], "f32", "q");
  const kv = g.input([2, 5, 2, 6], "f32", "kv");
  const ids = g.input([2, 5], "i32", "ids");
  assertThrows(
    () => causalAttention(q, g.input([2, 5, 3, 6], "f32", "k3"), kv, ids),
    Error,
    '"causal_attention" to q[2,5,4,6]:f32: expected f32 keys',
  );
  assertThrows(
    () => causalAttention(q, g.input([2, 5, 2, 8], "f32", "k8"), kv, ids),
    Error,
    "received k8[2,5,2,8]",
  );
  assertThrows(
    () => causalAttention(q, kv, g.input([2, 5, 1, 6], "f32", "v1"), ids),
    Error,
    "f32 values of shape [2,5,2,6]",
  );
  assertThrows(
    () => causalAttention(q, kv, kv, g.input([2, 5], "u32", "uids")),
    Error,
    "i32 segment ids of shape [2,5], received uids[2,5]:u32",
  );
  assertThrows(
    () => causalAttention(g.input([10, 24], "f32", "flat"), kv, kv, ids),
    Error,
    "f32 queries of shape [batch, seq, heads, head_dim]",
  );
  assertThrows(() => causalAttention(q, kv, kv, ids, { scale: NaN }), Error, "finite scale");
  assertThrows(
    () => causalAttention(q, kv, kv, ids, { window: 2.5 }),
    Error,
    "a whole window >= 0 (0: none), received 2.5",
  );
});
