/**
 * KV-cache ops: writeKvCache into a variable-backed cache (rows where the positions say, the
 * rest untouched, padding and out-of-range positions skipped, successive appends);
 * cachedAttention against the f64 CPU reference on odd shapes that take each kernel path (one
 * pass, key lanes, key splits); agreement with causalAttention for prefill, token-by-token decode
 * and both mixed; a write and an attention chained in one graph; shape errors.
 */

import { getGpu } from "../../src/gpu/device.ts";
import { compileGraph, type Executable } from "../../src/graph/executable.ts";
import { Graph } from "../../src/graph/graph.ts";
import { type DType, type HostData, shapeSize, type Tensor } from "../../src/graph/tensor.ts";
import { causalAttention } from "../../src/ops/attention.ts";
import { cachedAttention } from "../../src/ops/cached_attention.ts";
import { writeKvCache } from "../../src/ops/kv_cache.ts";
import { rope, ropeInvFreq } from "../../src/ops/rope.ts";
import {
  cachedAttentionRef,
  type KvCacheShape,
  writeKvCacheRef,
} from "../../src/reference/kv_cache.ts";
import { ropeRef } from "../../src/reference/rope.ts";
import { uniformArray } from "../../src/util/random.ts";
import { assertClose } from "../_assert_close.ts";
import { assertEquals, assertThrows } from "../_asserts.ts";
import { randomInput, runOps, type TestInput } from "../_harness.ts";
import { makeVariable } from "../_variable.ts";

/** i32 positions of `rows` (one array per slot). */
function positionsInput(rows: number[][]): TestInput {
  return { shape: [rows.length, rows[0].length], data: Int32Array.from(rows.flat()), dtype: "i32" };
}

/** A graph compiled once and run many times: its inputs by name and its outputs. */
interface Step {
  exe: Executable;
  inputs: Record<string, Tensor>;
  outputs: Tensor[];
}

/** Compiles the outputs `build` makes from graph inputs of the given names, shapes and dtypes. */
async function compileStep(
  label: string,
  specs: Record<string, { shape: readonly number[]; dtype: DType }>,
  build: (g: Graph, inputs: Record<string, Tensor>) => Tensor[],
): Promise<Step> {
  const g = new Graph();
  const inputs = Object.fromEntries(
    Object.entries(specs).map(([name, { shape, dtype }]) => [name, g.input(shape, dtype, name)]),
  );
  const outputs = build(g, inputs);
  return { exe: await compileGraph(await getGpu(), outputs, label), inputs, outputs };
}

/** Runs `step` on `feeds` (by input name) and reads its outputs. */
async function runStep(step: Step, feeds: Record<string, HostData>): Promise<HostData[]> {
  await step.exe.run(new Map(Object.entries(feeds).map(([name, x]) => [step.inputs[name], x])));
  return await step.exe.read(step.outputs);
}

/**
 * Appends rows of kvHeads x headDim to a variable-backed cache three times, checking it against
 * the reference after each.
 */
async function checkAppends(kvHeads: number, headDim: number, seed: number) {
  const width = kvHeads * headDim;
  const cacheShape = [3, 9, kvHeads, headDim];
  const initial = uniformArray(shapeSize(cacheShape), seed);
  const variable = await makeVariable("k_cache", cacheShape, initial);
  let expected = Float32Array.from(initial);
  const steps = new Map<number, Step>();
  try {
    // Slot 0 fills 0..3, slot 1 two tokens then padding, slot 2 positions past the cache.
    const appends: number[][][] = [
      [[0, 1, 2, 3], [0, 1, -1, -1], [-1, 9, 12, 0]],
      [[4, 5], [2, -1], [1, 2]],
      [[6, 7], [3, 4], [-5, 8]],
    ];
    for (const [i, rows] of appends.entries()) {
      const tokens = rows[0].length;
      const shape = { slots: 3, tokens, maxLen: 9, heads: kvHeads, kvHeads, headDim };
      const x = randomInput([3, tokens, kvHeads, headDim], seed + i);
      const positions = positionsInput(rows);
      const step = steps.get(tokens) ?? await compileStep(
        `append${tokens}`,
        {
          x: { shape: x.shape, dtype: "f32" },
          positions: { shape: positions.shape, dtype: "i32" },
        },
        (g, { x, positions }) => [writeKvCache(g.variable(variable), x, positions)],
      );
      steps.set(tokens, step);
      const [cache] = await runStep(step, { x: x.data, positions: positions.data });
      expected = writeKvCacheRef(expected, x.data, positions.data, shape);
      assertEquals([...cache], [...expected], `cache after append ${i}`);
    }
    // Untouched rows keep their values: slot 2 row 3 was never written.
    const row = (2 * 9 + 3) * width;
    assertEquals([...expected.subarray(row, row + width)], [...initial.subarray(row, row + width)]);
  } finally {
    for (const step of steps.values()) step.exe.destroy();
    variable.buffer.destroy();
  }
}

Deno.test("writeKvCache: writes a variable's rows where the positions say, and appends", async () => {
  await checkAppends(2, 5, 900); // rows of 10: an element per invocation
  await checkAppends(3, 4, 920); // rows of 12: four per invocation (main4)
});

/**
 * A rotating write of 3 slots x 2 tokens of 3 kv heads of `headDim` into a cache of 7 rows
 * (padding, a position past the cache), and at long positions whose angles need the reduction,
 * against the reference and against rope() then a plain write.
 */
async function checkRotatingWrite(headDim: number, seed: number) {
  const shape = { slots: 3, tokens: 2, maxLen: 7, heads: 3, kvHeads: 3, headDim };
  const invFreq = ropeInvFreq(10000, headDim);
  const cache = randomInput([3, 7, 3, headDim], seed);
  const x = randomInput([3, 2, 3, headDim], seed + 1);
  const rows = [[0, 5], [-1, 3], [6, 9]];
  const positions = positionsInput(rows);
  const [fused, separate] = await runOps([cache, x, positions], (c, k, pos) => [
    writeKvCache(c, k, pos, { invFreq }),
    writeKvCache(c, rope(k, pos, invFreq), pos),
  ]);
  const expected = writeKvCacheRef(
    cache.data,
    ropeRef(x.data, positions.data, shape.kvHeads, shape.headDim, invFreq),
    positions.data,
    shape,
  );
  assertClose(fused, expected, { atol: 1e-6, rtol: 1e-6, label: "rotating write" });
  assertClose(fused, separate, { atol: 1e-6, rtol: 1e-6, label: "rotating write vs rope" });
  // Long positions: the angle reduction at 40000 and 123457 (a cache that long, one row each).
  const far = { ...shape, slots: 1, tokens: 2, maxLen: 123458 };
  const farCache = randomInput([1, far.maxLen, 3, headDim], seed + 2);
  const farX = randomInput([1, 2, 3, headDim], seed + 3);
  const farPositions = positionsInput([[40000, 123457]]);
  const [farOut] = await runOps(
    [farCache, farX, farPositions],
    (c, k, pos) => writeKvCache(c, k, pos, { invFreq: ropeInvFreq(1000000, headDim) }),
  );
  const farExpected = writeKvCacheRef(
    farCache.data,
    ropeRef(farX.data, farPositions.data, 3, headDim, ropeInvFreq(1000000, headDim)),
    farPositions.data,
    far,
  );
  for (const pos of [40000, 123457]) {
    const at = [pos * 3 * headDim, (pos + 1) * 3 * headDim];
    assertClose(farOut.subarray(...at), farExpected.subarray(...at), {
      atol: 1e-5,
      label: `rotating write at position ${pos}`,
    });
  }
}

Deno.test("writeKvCache with invFreq: rotated keys as rope() then a write give, odd shapes", async () => {
  await checkRotatingWrite(6, 940); // pairs of 3: a pair per invocation
  await checkRotatingWrite(24, 950); // pairs of 12: four per invocation (main4), three quads
});

Deno.test("writeKvCache with invFreq refuses an odd head dim and a bad table", () => {
  const g = new Graph();
  const positions = g.input([1, 1], "i32");
  const write = (headDim: number, invFreq: Float32Array<ArrayBuffer>) =>
    writeKvCache(g.input([1, 4, 1, headDim]), g.input([1, 1, 1, headDim]), positions, { invFreq });
  assertThrows(() => write(5, ropeInvFreq(1e4, 4)), Error, "expected an even head_dim");
  assertThrows(
    () => write(6, Float32Array.of(1, -1, 0)),
    Error,
    "3 finite inverse frequencies >= 0, received 3",
  );
});

/** One cachedAttention problem on the caches as graph inputs. */
interface Case {
  label: string;
  shape: KvCacheShape;
  /** positions[s][t]. */
  positions: number[][];
  scale?: number;
  /** Sliding window: keys a query sees, itself included. */
  window?: number;
  /** Soft cap of the scores. */
  softcap?: number;
}

// Layouts on the CPU adapter (8 invocations of up to 8 home rows; home rows = tokens * heads /
// kvHeads): see `layout` in src/ops/cached_attention.ts.
const CASES: Case[] = [
  {
    label: "decode, H=4 Hkv=1 D=6 Tmax=37: 8 key lanes, tiles of 8 keys",
    shape: { slots: 3, tokens: 1, maxLen: 37, heads: 4, kvHeads: 1, headDim: 6 },
    positions: [[36], [0], [-1]],
  },
  {
    label: "decode, H=4 Hkv=4 D=10 Tmax=70: one home row, 8 key lanes",
    shape: { slots: 3, tokens: 1, maxLen: 70, heads: 4, kvHeads: 4, headDim: 10 },
    positions: [[69], [33], [4]],
  },
  {
    label: "two tokens, H=4 Hkv=1 D=10 Tmax=70: 8 home rows, a position past the cache",
    shape: { slots: 3, tokens: 2, maxLen: 70, heads: 4, kvHeads: 1, headDim: 10 },
    positions: [[10, 11], [68, 69], [-1, 100]],
  },
  {
    label: "prefill, H=4 Hkv=2 D=6 Tmax=37: 2 row lanes x 4 key lanes",
    shape: { slots: 3, tokens: 5, maxLen: 37, heads: 4, kvHeads: 2, headDim: 6 },
    positions: [[0, 1, 2, 3, 4], [20, 21, 22, -1, -1], [-1, -1, 30, 31, 36]],
  },
  {
    label: "prefill, H=4 Hkv=1 D=6 Tmax=37: one pass, 2 blocks of 8 row lanes",
    shape: { slots: 2, tokens: 20, maxLen: 37, heads: 4, kvHeads: 1, headDim: 6 },
    positions: [
      Array.from({ length: 20 }, (_, t) => t),
      Array.from({ length: 20 }, (_, t) => t < 3 ? -1 : t + 14),
    ],
  },
  {
    label: "decode, H=2 Hkv=2 D=6 Tmax=600: 8 key lanes x 2 splits",
    shape: { slots: 2, tokens: 1, maxLen: 600, heads: 2, kvHeads: 2, headDim: 6 },
    positions: [[599], [300]],
  },
  {
    label: "head_dim 130, H=2 Hkv=1 Tmax=20: tiles of 4 keys",
    shape: { slots: 1, tokens: 3, maxLen: 20, heads: 2, kvHeads: 1, headDim: 130 },
    positions: [[17, 18, 19]],
  },
  // Head dims that are multiples of 4: attend4, four elements per load.
  {
    label: "attend4: decode, H=4 Hkv=1 D=8 Tmax=37: 8 key lanes, a padding row",
    shape: { slots: 3, tokens: 1, maxLen: 37, heads: 4, kvHeads: 1, headDim: 8 },
    positions: [[36], [5], [-1]],
  },
  {
    label: "attend4: two tokens, H=4 Hkv=1 D=12 Tmax=70: 8 home rows, a position past the cache",
    shape: { slots: 3, tokens: 2, maxLen: 70, heads: 4, kvHeads: 1, headDim: 12 },
    positions: [[10, 11], [68, 69], [-1, 100]],
  },
  {
    label: "attend4: prefill, H=4 Hkv=1 D=4 Tmax=37: one pass, several tiles per row",
    shape: { slots: 2, tokens: 20, maxLen: 37, heads: 4, kvHeads: 1, headDim: 4 },
    positions: [
      Array.from({ length: 20 }, (_, t) => t + 17),
      Array.from({ length: 20 }, (_, t) => t < 3 ? -1 : t + 14),
    ],
  },
  {
    label: "attend4: decode, H=2 Hkv=2 D=8 Tmax=600: 8 key lanes x 2 splits",
    shape: { slots: 2, tokens: 1, maxLen: 600, heads: 2, kvHeads: 2, headDim: 8 },
    positions: [[599], [300]],
  },
  // Eight slots or more (four with two row lanes): a slot per lane, no key lanes, no combine.
  {
    label: "decode, H=6 Hkv=2 D=10 Tmax=45: 11 slots in slot lanes (8 + 3), padding",
    shape: { slots: 11, tokens: 1, maxLen: 45, heads: 6, kvHeads: 2, headDim: 10 },
    positions: Array.from({ length: 11 }, (_, s) => [s === 4 ? -1 : (7 * s + 3) % 50]),
  },
  {
    label: "attend4: decode, H=9 Hkv=3 D=8 Tmax=40: 9 slots in slot lanes, tiles of 16 keys",
    shape: { slots: 9, tokens: 1, maxLen: 40, heads: 9, kvHeads: 3, headDim: 8 },
    positions: Array.from({ length: 9 }, (_, s) => [s === 8 ? -1 : 39 - 4 * s]),
  },
  {
    label: "attend4: prefill, H=4 Hkv=2 D=4 Tmax=23: 2 row lanes x 4 slot lanes, 5 slots",
    shape: { slots: 5, tokens: 5, maxLen: 23, heads: 4, kvHeads: 2, headDim: 4 },
    positions: Array.from(
      { length: 5 },
      (_, s) => Array.from({ length: 5 }, (_, t) => s === 2 && t < 2 ? -1 : 3 * s + t + 4),
    ),
  },
  {
    label: "scale 0.7, H=2 Hkv=1 D=3 Tmax=9",
    shape: { slots: 2, tokens: 2, maxLen: 9, heads: 2, kvHeads: 1, headDim: 3 },
    positions: [[3, 4], [0, 8]],
    scale: 0.7,
  },
  // Sliding windows: queries past the window skip the cache rows before it.
  {
    label: "window 5: prefill, H=4 Hkv=2 D=6 Tmax=37, rows before and past the window",
    shape: { slots: 3, tokens: 5, maxLen: 37, heads: 4, kvHeads: 2, headDim: 6 },
    positions: [[0, 1, 2, 3, 4], [20, 21, 22, -1, -1], [-1, -1, 30, 31, 36]],
    window: 5,
  },
  {
    label: "window 7: decode, H=2 Hkv=2 D=6 Tmax=600: key splits wholly before the window",
    shape: { slots: 2, tokens: 1, maxLen: 600, heads: 2, kvHeads: 2, headDim: 6 },
    positions: [[599], [300]],
    window: 7,
  },
  {
    label: "window 3, attend4: decode in slot lanes, H=9 Hkv=3 D=8 Tmax=40",
    shape: { slots: 9, tokens: 1, maxLen: 40, heads: 9, kvHeads: 3, headDim: 8 },
    positions: Array.from({ length: 9 }, (_, s) => [s === 8 ? -1 : 39 - 4 * s]),
    window: 3,
  },
  {
    label: "softcap 1.5, window 6, H=4 Hkv=2 D=6 Tmax=37 (attend) and decode splits",
    shape: { slots: 2, tokens: 3, maxLen: 37, heads: 4, kvHeads: 2, headDim: 6 },
    positions: [[20, 21, 22], [34, 35, 36]],
    window: 6,
    softcap: 1.5,
  },
  {
    label: "softcap 2, attend4: decode over 600 keys, H=2 Hkv=1 D=8",
    shape: { slots: 2, tokens: 1, maxLen: 600, heads: 2, kvHeads: 1, headDim: 8 },
    positions: [[599], [250]],
    softcap: 2,
  },
  {
    label: "window 1, attend4: two tokens each seeing only itself, H=4 Hkv=1 D=12 Tmax=70",
    shape: { slots: 3, tokens: 2, maxLen: 70, heads: 4, kvHeads: 1, headDim: 12 },
    positions: [[10, 11], [68, 69], [-1, 100]],
    window: 1,
  },
];

Deno.test("cachedAttention: matches CPU on odd shapes, GQA, padding and every kernel path", async () => {
  for (const [i, c] of CASES.entries()) {
    const { slots, tokens, maxLen, heads, kvHeads, headDim } = c.shape;
    const inputs = [
      randomInput([slots, tokens, heads, headDim], 1000 + 10 * i, -2, 2),
      randomInput([slots, maxLen, kvHeads, headDim], 1001 + 10 * i, -2, 2),
      randomInput([slots, maxLen, kvHeads, headDim], 1002 + 10 * i),
      positionsInput(c.positions),
    ];
    const [y] = await runOps(
      inputs,
      (q, k, v, pos) =>
        cachedAttention(q, k, v, pos, { scale: c.scale, window: c.window, softcap: c.softcap }),
    );
    const [q, k, v, pos] = inputs.map((x) => x.data);
    assertClose(y, cachedAttentionRef(q, k, v, pos, c.shape, c.scale, c.window, c.softcap), {
      label: c.label,
      atol: 1e-5,
      rtol: 1e-4,
    });
    // Padding rows are exactly 0.
    c.positions.flat().forEach((p, row) => {
      if (p >= 0) return;
      const width = heads * headDim;
      assertEquals([...y.subarray(row * width, (row + 1) * width)], new Array(width).fill(0));
    });
  }
});

/** Rows [from, from + n) of the time axis of x [slots, seq, ...] with `width` floats per row. */
function timeSlice(
  x: HostData,
  slots: number,
  seq: number,
  width: number,
  from: number,
  n: number,
) {
  const out = new Float32Array(slots * n * width);
  for (let s = 0; s < slots; s++) {
    out.set(x.subarray((s * seq + from) * width, (s * seq + from + n) * width), s * n * width);
  }
  return out;
}

Deno.test("cachedAttention: prefill, token-by-token decode and both mixed equal causalAttention", async () => {
  const [slots, seq, heads, kvHeads, headDim, maxLen] = [2, 11, 4, 2, 6, 13];
  const lengths = [11, 7]; // slot 1 is padded after 7 tokens
  const q = randomInput([slots, seq, heads, headDim], 1100);
  const k = randomInput([slots, seq, kvHeads, headDim], 1101);
  const v = randomInput([slots, seq, kvHeads, headDim], 1102);
  const position = (s: number, t: number) => t < lengths[s] ? t : -1;
  const segments: TestInput = {
    shape: [slots, seq],
    data: Int32Array.from(
      { length: slots * seq },
      (_, i) => position(Math.floor(i / seq), i % seq) < 0 ? -1 : 0,
    ),
    dtype: "i32",
  };
  const [full] = await runOps(
    [q, k, v, segments],
    (q, k, v, ids) => causalAttention(q, k, v, ids),
  );

  // Feeds the sequence in chunks of `chunks` tokens through fresh zero caches, one graph per
  // chunk length, and returns the attention outputs laid out as [slots, seq, heads, headDim].
  const incremental = async (chunks: number[]): Promise<Float32Array> => {
    const cacheShape = [slots, maxLen, kvHeads, headDim];
    const zeros = new Float32Array(shapeSize(cacheShape));
    const kVar = await makeVariable("k_cache", cacheShape, zeros);
    const vVar = await makeVariable("v_cache", cacheShape, zeros);
    const steps = new Map<number, Step>();
    const result = new Float32Array(slots * seq * heads * headDim);
    const width = heads * headDim;
    try {
      let from = 0;
      for (const n of chunks) {
        const step = steps.get(n) ?? await compileStep(
          `chunk${n}`,
          {
            q: { shape: [slots, n, heads, headDim], dtype: "f32" },
            k: { shape: [slots, n, kvHeads, headDim], dtype: "f32" },
            v: { shape: [slots, n, kvHeads, headDim], dtype: "f32" },
            positions: { shape: [slots, n], dtype: "i32" },
          },
          (g, { q, k, v, positions }) => [
            cachedAttention(
              q,
              writeKvCache(g.variable(kVar), k, positions),
              writeKvCache(g.variable(vVar), v, positions),
              positions,
            ),
          ],
        );
        steps.set(n, step);
        const [out] = await runStep(step, {
          q: timeSlice(q.data, slots, seq, width, from, n),
          k: timeSlice(k.data, slots, seq, kvHeads * headDim, from, n),
          v: timeSlice(v.data, slots, seq, kvHeads * headDim, from, n),
          positions: Int32Array.from(
            { length: slots * n },
            (_, i) => position(Math.floor(i / n), from + (i % n)),
          ),
        });
        for (let s = 0; s < slots; s++) {
          result.set(out.subarray(s * n * width, (s + 1) * n * width), (s * seq + from) * width);
        }
        from += n;
      }
      return result;
    } finally {
      for (const step of steps.values()) step.exe.destroy();
      kVar.buffer.destroy();
      vVar.buffer.destroy();
    }
  };

  const tol = { atol: 1e-5, rtol: 0 };
  assertClose(await incremental([seq]), full, { ...tol, label: "prefill" });
  assertClose(await incremental(new Array(seq).fill(1)), full, { ...tol, label: "decode" });
  assertClose(await incremental([5, 1, 1, 1, 1, 1, 1]), full, {
    ...tol,
    label: "prefill + decode",
  });
});

Deno.test("cachedAttention reads the cache that writeKvCache updated in the same graph", async () => {
  const shape = { slots: 3, tokens: 2, maxLen: 10, heads: 4, kvHeads: 2, headDim: 6 };
  const cacheShape = [3, 10, 2, 6];
  const k0 = uniformArray(shapeSize(cacheShape), 1200);
  const v0 = uniformArray(shapeSize(cacheShape), 1201);
  const kVar = await makeVariable("k_cache", cacheShape, k0);
  const vVar = await makeVariable("v_cache", cacheShape, v0);
  const q = randomInput([3, 2, 4, 6], 1202);
  const k = randomInput([3, 2, 2, 6], 1203);
  const v = randomInput([3, 2, 2, 6], 1204);
  // History of 4, 0 and 8 tokens; slot 2's second token is padding.
  const positions = Int32Array.from([4, 5, 0, 1, 8, -1]);
  const step = await compileStep(
    "chain",
    {
      q: { shape: q.shape, dtype: "f32" },
      k: { shape: k.shape, dtype: "f32" },
      v: { shape: v.shape, dtype: "f32" },
      positions: { shape: [3, 2], dtype: "i32" },
    },
    (g, { q, k, v, positions }) => {
      const kCache = writeKvCache(g.variable(kVar), k, positions);
      const vCache = writeKvCache(g.variable(vVar), v, positions);
      return [cachedAttention(q, kCache, vCache, positions), kCache, vCache];
    },
  );
  try {
    const [y, kAfter, vAfter] = await runStep(step, {
      q: q.data,
      k: k.data,
      v: v.data,
      positions,
    });
    const kRef = writeKvCacheRef(k0, k.data, positions, shape);
    const vRef = writeKvCacheRef(v0, v.data, positions, shape);
    // In place: the updated caches are the variables' own buffers.
    assertEquals(step.exe.buffer(step.outputs[1]) === kVar.buffer, true, "key cache storage");
    assertEquals(step.exe.buffer(step.outputs[2]) === vVar.buffer, true, "value cache storage");
    assertEquals([...kAfter], [...kRef], "key cache");
    assertEquals([...vAfter], [...vRef], "value cache");
    assertClose(y, cachedAttentionRef(q.data, kRef, vRef, positions, shape), {
      label: "attention over the updated cache",
      atol: 1e-5,
      rtol: 1e-4,
    });
  } finally {
    step.exe.destroy();
    kVar.buffer.destroy();
    vVar.buffer.destroy();
  }
});

Deno.test("writeKvCache and cachedAttention reject mismatched shapes and dtypes, naming the op", () => {
  const g = new Graph();
  const cache = g.input([2, 8, 2, 6], "f32", "cache");
  const x = g.input([2, 3, 2, 6], "f32", "x");
  const pos = g.input([2, 3], "i32", "pos");
  const q = g.input([2, 3, 4, 6], "f32", "q");
  assertThrows(
    () => writeKvCache(g.input([2, 8, 12], "f32", "flat"), x, pos),
    Error,
    '"write_kv_cache" to flat[2,8,12]:f32: expected an f32 cache',
  );
  assertThrows(
    () => writeKvCache(cache, g.input([2, 3, 1, 6], "f32", "x1"), pos),
    Error,
    "expected f32 new rows of shape [2,tokens,2,6], received x1[2,3,1,6]:f32",
  );
  assertThrows(
    () => writeKvCache(cache, x, g.input([2, 3], "u32", "upos")),
    Error,
    "expected i32 positions of shape [2,3], received upos[2,3]:u32",
  );
  assertThrows(
    () => cachedAttention(q, g.input([2, 8, 3, 6], "f32", "k3"), cache, pos),
    Error,
    '"cached_attention" to q[2,3,4,6]:f32: expected an f32 key cache',
  );
  assertThrows(
    () => cachedAttention(q, cache, g.input([2, 9, 2, 6], "f32", "v9"), pos),
    Error,
    "an f32 value cache of shape [2,8,2,6], received v9[2,9,2,6]:f32",
  );
  assertThrows(
    () => cachedAttention(q, cache, cache, g.input([2, 1], "i32", "p1")),
    Error,
    "i32 positions of shape [2,3], received p1[2,1]:i32",
  );
  assertThrows(() => cachedAttention(q, cache, cache, pos, { scale: Infinity }), Error, "finite");
});
