/**
 * Token log-probs and entropy over the last axis: forward against the f64 CPU reference on
 * short (V = 1, 3, 7), long (vocabulary-sized) and many rows, extreme and equal logits, i32 and
 * u32 and out-of-range targets; backward against finite differences (small shapes) and the
 * analytic gradient (50000-column rows).
 */

import { grad } from "../../src/graph/autodiff.ts";
import { Graph } from "../../src/graph/graph.ts";
import { type DType, shapeSize, type Tensor } from "../../src/graph/tensor.ts";
import { tokenEntropy, tokenLogprobs, tokenStats } from "../../src/ops/token_logprobs.ts";
import {
  tokenEntropyRef,
  tokenLogprobsRef,
  tokenStatsGradRef,
  tokenStatsRef,
} from "../../src/reference/token_logprobs.ts";
import { mulberry32, uniformArray } from "../../src/util/random.ts";
import { sliceLast } from "../../src/ops/slice.ts";
import { assertClose } from "../_assert_close.ts";
import { assertEquals, assertThrows } from "../_asserts.ts";
import { checkGradients, randomInput, runOps, type TestInput } from "../_harness.ts";

// Log-probs reach ~-160 for +-80 logits; entropies of 50000-way rows are ~10.
const TOL = { atol: 1e-5, rtol: 1e-5 };

const SHAPES = [
  [7, 37],
  [3, 5, 1], // one column: log-prob 0, entropy 0
  [4, 3],
  [2, 7],
  [7], // rank 1: one row, scalar result
  [2, 300], // rows longer than the workgroup
  [1, 5003],
  [300, 7], // more rows than threads in a workgroup
  [2, 50000], // vocabulary-sized rows
];

/** Per-row weights `g` placed in column `k` of [rows, 4] statistics' gradient. */
function onColumn(g: ArrayLike<number>, k: number): Float64Array {
  const out = new Float64Array(g.length * 4);
  for (let r = 0; r < g.length; r++) out[r * 4 + k] = g[r];
  return out;
}

/** Targets for `logits` of `shape`: uniform in [0, V) from `seed`. */
function targetsFor(shape: readonly number[], seed: number, dtype: DType = "i32"): TestInput {
  const cols = shape[shape.length - 1];
  const next = mulberry32(seed);
  const values = Array.from({ length: shapeSize(shape) / cols }, () => Math.floor(next() * cols));
  const data = dtype === "i32" ? Int32Array.from(values) : Uint32Array.from(values);
  return { shape: shape.slice(0, -1), data, dtype };
}

Deno.test("token log-probs and entropy: forward matches CPU on short, long and many rows", async () => {
  for (const [i, shape] of SHAPES.entries()) {
    const cols = shape[shape.length - 1];
    const x = randomInput(shape, 300 + i, -4, 4);
    const targets = targetsFor(shape, 320 + i, i % 2 ? "u32" : "i32");
    const [lp, h] = await runOps(
      [x, targets],
      (z: Tensor, t: Tensor) => [tokenLogprobs(z, t), tokenEntropy(z)],
    );
    assertClose(lp, tokenLogprobsRef(x.data, cols, targets.data), {
      label: `logprobs ${shape}`,
      ...TOL,
    });
    assertClose(h, tokenEntropyRef(x.data, cols), { label: `entropy ${shape}`, ...TOL });
  }
});

Deno.test("token log-probs and entropy: extreme and equal logits stay finite, match CPU", async () => {
  const data = Float32Array.from([
    ...[80, -80, 0, 80, -80, 79.5, -79.5], // large positive and negative
    ...[3.25, 3.25, 3.25, 3.25, 3.25, 3.25, 3.25], // equal: log-prob -log 7, entropy log 7
    ...[1000, 999, 0, -1000, -1000, 998, 1000], // exp would overflow without the max shift
    ...[-80, -80, -80, -80, -80, -80, -90], // all very negative
    ...[80, -80, -80, -80, -80, -80, -80], // one-hot: entropy ~0
  ]);
  const x = { shape: [5, 7], data };
  const targets = { shape: [5], data: Int32Array.from([1, 4, 3, 6, 0]), dtype: "i32" as const };
  const [lp, h] = await runOps(
    [x, targets],
    (z: Tensor, t: Tensor) => [tokenLogprobs(z, t), tokenEntropy(z)],
  );
  if (![...lp, ...h].every(Number.isFinite)) throw new Error(`non-finite output ${lp} ${h}`);
  assertClose(lp, tokenLogprobsRef(data, 7, targets.data), { label: "logprobs extreme", ...TOL });
  assertClose(h, tokenEntropyRef(data, 7), { label: "entropy extreme", ...TOL });
  assertClose([lp[1], h[1]], [-Math.log(7), Math.log(7)], { label: "equal logits", ...TOL });
});

Deno.test("tokenLogprobs: out-of-range targets give 0 and no gradient", async () => {
  const shape = [4, 5];
  const x = randomInput(shape, 340, -2, 2);
  const seed = uniformArray(4, 341);
  const cases: TestInput[] = [
    { shape: [4], data: Int32Array.from([-1, 2, 5, -100]), dtype: "i32" },
    { shape: [4], data: Uint32Array.from([4294967295, 2, 5, 7]), dtype: "u32" },
  ];
  for (const targets of cases) {
    const [lp, dx] = await runOps([x, targets], (z: Tensor, t: Tensor) => {
      const y = tokenLogprobs(z, t);
      return [y, ...grad(y, [z], z.graph.constant(seed, y.shape))];
    });
    assertEquals([lp[0], lp[2], lp[3]], [0, 0, 0], `${targets.dtype} log-probs`);
    assertClose(lp, tokenLogprobsRef(x.data, 5, targets.data), { label: "logprobs", ...TOL });
    const expected = tokenStatsGradRef(x.data, 5, targets.data, onColumn(seed, 0));
    const ignored = [...dx.subarray(0, 5), ...dx.subarray(10)];
    assertClose(ignored, new Array(15).fill(0), { label: "ignored rows", atol: 0, rtol: 0 });
    assertClose(dx, expected, { label: `${targets.dtype} gradient`, ...TOL });
  }
});

/** Gradient-check inputs: small shapes (finite differences cost O(size^2)), and wide logits. */
const GRAD_CASES = [
  { shape: [3, 5, 7], lo: -3, hi: 3 },
  { shape: [4, 1], lo: -3, hi: 3 },
  { shape: [2, 3], lo: -3, hi: 3 },
  { shape: [2, 300], lo: -3, hi: 3 },
  { shape: [2, 9], lo: -20, hi: 20 },
];

Deno.test("tokenLogprobs: backward matches finite differences", async () => {
  for (const [i, { shape, lo, hi }] of GRAD_CASES.entries()) {
    const cols = shape[shape.length - 1];
    await checkGradients({
      label: `tokenLogprobs ${shape} in [${lo},${hi})`,
      inputs: [randomInput(shape, 350 + i, lo, hi), targetsFor(shape, 360 + i)],
      build: tokenLogprobs,
      reference: (z, t) => tokenLogprobsRef(z, cols, t),
    });
  }
});

Deno.test("tokenEntropy: backward matches finite differences", async () => {
  for (const [i, { shape, lo, hi }] of GRAD_CASES.entries()) {
    const cols = shape[shape.length - 1];
    await checkGradients({
      label: `tokenEntropy ${shape} in [${lo},${hi})`,
      inputs: [randomInput(shape, 370 + i, lo, hi)],
      build: tokenEntropy,
      reference: (z) => tokenEntropyRef(z, cols),
    });
  }
});

Deno.test("token log-probs and entropy: backward on 50000-column rows matches analytic", async () => {
  const shape = [2, 50000];
  const x = randomInput(shape, 380, -6, 6);
  const targets = targetsFor(shape, 381, "u32");
  const seed = uniformArray(2, 382);
  const [dLp, dH] = await runOps([x, targets], (z: Tensor, t: Tensor) => {
    const g = z.graph.constant(seed, [2]);
    return [...grad(tokenLogprobs(z, t), [z], g), ...grad(tokenEntropy(z), [z], g)];
  });
  const tol = { atol: 1e-7, rtol: 1e-4 };
  assertClose(dLp, tokenStatsGradRef(x.data, 50000, targets.data, onColumn(seed, 0)), {
    label: "tokenLogprobs gradient",
    ...tol,
  });
  assertClose(dH, tokenStatsGradRef(x.data, 50000, targets.data, onColumn(seed, 1)), {
    label: "tokenEntropy gradient",
    ...tol,
  });
});

Deno.test("token log-probs and entropy over more than 65535 rows use the 2-D grid", async () => {
  const shape = [70001, 3];
  const x = randomInput(shape, 390, -4, 4);
  const targets = targetsFor(shape, 391);
  const [lp, h] = await runOps(
    [x, targets],
    (z: Tensor, t: Tensor) => [tokenLogprobs(z, t), tokenEntropy(z)],
  );
  assertClose(lp, tokenLogprobsRef(x.data, 3, targets.data), {
    label: "logprobs [70001,3]",
    ...TOL,
  });
  assertClose(h, tokenEntropyRef(x.data, 3), { label: "entropy [70001,3]", ...TOL });
});

Deno.test("token log-probs and entropy reject wrong dtypes and shapes, naming the op", () => {
  const g = new Graph();
  const logits = g.input([2, 3, 5], "f32", "logits");
  assertThrows(() => tokenLogprobs(logits, g.input([2, 3], "f32", "t")), Error, "i32 or u32");
  assertThrows(() => tokenLogprobs(logits, g.input([3, 2], "i32", "t")), Error, "shape [2,3]");
  assertThrows(
    () => tokenLogprobs(g.input([2, 5], "i32", "ilogits"), g.input([2], "i32", "t")),
    Error,
    '"token_logprobs" to ilogits',
  );
  const piece = (first: number, cols: number) => ({ logits: g.input([2, cols]), first });
  const t = g.input([2], "i32", "t");
  assertThrows(() => tokenStats([piece(0, 3), piece(2, 3)], t), Error, "piece 0");
  assertThrows(() => tokenStats([piece(0, 3)], t, { targetOffset: 1 }), Error, "at least 3");
  assertThrows(() => tokenStats([piece(0, 3)], t, { temperature: 0 }), Error, "temperature");
  assertThrows(() => tokenEntropy(g.input([], "f32", "s")), Error, '"token_entropy" to s');
});

/** [rows, V] logits cut at `cuts` into pieces, as graph inputs of the test harness. */
function piecesOf(z: Tensor, cuts: readonly number[]) {
  const bounds = [0, ...cuts, z.lastDim];
  return bounds.slice(0, -1).map((first, k) => ({
    logits: sliceLast(z, first, bounds[k + 1] - first),
    first,
  }));
}

/** Vocabularies split into pieces: the statistics of the whole row, with temperatures. */
const PIECE_CASES = [
  { rows: 5, vocab: 37, cuts: [10, 11, 30], temperature: 1 },
  { rows: 3, vocab: 300, cuts: [150], temperature: 0.7 },
  { rows: 2, vocab: 5003, cuts: [1, 2000, 5002], temperature: 1.3 },
  { rows: 4, vocab: 9, cuts: [], temperature: 2 },
];

Deno.test("tokenStats: pieces of the vocabulary give the whole row's statistics", async () => {
  for (const [i, { rows, vocab, cuts, temperature }] of PIECE_CASES.entries()) {
    const x = randomInput([rows, vocab], 400 + i, -5, 5);
    // Targets in every piece, one out of range, read from an offset of 2.
    const ids = [-1, 0, ...cuts, vocab - 1, vocab + 3].slice(0, rows + 2);
    while (ids.length < rows + 2) ids.push(vocab - 2);
    const targets = { shape: [rows + 2], data: Int32Array.from(ids), dtype: "i32" as const };
    const [stats] = await runOps(
      [x, targets],
      (z: Tensor, t: Tensor) =>
        tokenStats(piecesOf(z, cuts), t, { vocab, temperature, targetOffset: 2 }),
    );
    assertClose(stats, tokenStatsRef(x.data, vocab, ids.slice(2), temperature), {
      label: `stats ${rows}x${vocab} cut at ${cuts} @${temperature}`,
      ...TOL,
    });
  }
});

Deno.test("tokenStats: backward over pieces matches finite differences and the closed form", async () => {
  for (const [i, { rows, vocab, cuts, temperature }] of PIECE_CASES.slice(0, 2).entries()) {
    const shape = [rows, vocab];
    const targets = targetsFor(shape, 420 + i);
    await checkGradients({
      label: `tokenStats ${shape} cut at ${cuts} @${temperature}`,
      inputs: [randomInput(shape, 410 + i, -3, 3), targets],
      build: (z, t) => tokenStats(piecesOf(z, cuts), t, { vocab, temperature }),
      reference: (z, t) => tokenStatsRef(z, vocab, t, temperature),
    });
  }
  const { rows, vocab, cuts, temperature } = PIECE_CASES[2];
  const x = randomInput([rows, vocab], 430, -6, 6);
  const targets = targetsFor([rows, vocab], 431);
  const seed = uniformArray(rows * 4, 432);
  const [dx] = await runOps([x, targets], (z: Tensor, t: Tensor) => {
    const stats = tokenStats(piecesOf(z, cuts), t, { vocab, temperature });
    return grad(stats, [z], z.graph.constant(seed, stats.shape));
  });
  assertClose(dx, tokenStatsGradRef(x.data, vocab, targets.data, seed, temperature), {
    label: "tokenStats gradient, 5003 columns in 4 pieces",
    atol: 1e-7,
    rtol: 1e-4,
  });
});
