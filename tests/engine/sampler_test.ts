/**
 * The GPU token sampler against the CPU reference: greedy (ties -> first index), tokens equal to
 * the reference's for the same uniform number on short, odd and vocabulary-sized rows with mixed
 * settings, top-k/top-p kept sets (ties and renormalisation), log-probs, a frequency check of
 * temperature sampling, reproducibility, and the rng state advanced on the GPU between runs.
 */

import { getGpu } from "../../src/gpu/device.ts";
import { compileGraph, type Feed } from "../../src/graph/executable.ts";
import { Graph } from "../../src/graph/graph.ts";
import type { Tensor } from "../../src/graph/tensor.ts";
import {
  advanceRng,
  packRngState,
  packSamplingSettings,
  sampleTokens,
  type SamplingParams,
  temperedLogprobs,
} from "../../src/engine/sampler.ts";
import {
  keptTokensRef,
  sampleRowRef,
  samplerUniform,
  temperedLogprobRef,
} from "../../src/reference/sampler.ts";
import { mulberry32, uniformArray } from "../../src/util/random.ts";
import { assertClose } from "../_assert_close.ts";
import { assertEquals, assertThrows } from "../_asserts.ts";
import { runOps } from "../_harness.ts";

const TOL = { atol: 1e-5, rtol: 1e-5 };

/** Row r of `data` read as [rows, cols]. */
function rowOf(data: Float32Array, cols: number, r: number): Float32Array {
  return data.subarray(r * cols, (r + 1) * cols);
}

/** Runs `sampleTokens` on `logits` [rows, cols] with one settings row and rng row per row. */
async function sample(
  logits: Float32Array<ArrayBuffer>,
  cols: number,
  params: readonly SamplingParams[],
  rng: Uint32Array<ArrayBuffer>,
): Promise<{ tokens: Uint32Array; logprobs: Float32Array }> {
  const rows = params.length;
  const [tokens, logprobs] = await runOps(
    [
      { shape: [rows, cols], data: logits },
      { shape: [rows, 3], data: packSamplingSettings(params) },
      { shape: [rows, 2], data: rng, dtype: "u32" },
    ],
    (z: Tensor, s: Tensor, r: Tensor) => {
      const out = sampleTokens(z, s, r);
      return [out.tokens, out.logprobs];
    },
  );
  return { tokens: tokens as Uint32Array, logprobs: logprobs as Float32Array };
}

/** CPU tokens and log-probs for the same inputs as {@link sample}. */
function reference(
  logits: Float32Array,
  cols: number,
  params: readonly SamplingParams[],
  rng: Uint32Array,
): { tokens: number[]; logprobs: number[] } {
  const tokens = params.map((p, r) =>
    sampleRowRef(rowOf(logits, cols, r), p, samplerUniform(rng[2 * r], rng[2 * r + 1]))
  );
  const logprobs = tokens.map((tok, r) =>
    temperedLogprobRef(rowOf(logits, cols, r), params[r].temperature, tok)
  );
  return { tokens, logprobs };
}

/** Runs the sampler and asserts tokens equal and log-probs close to the reference. */
async function checkAgainstReference(
  label: string,
  logits: Float32Array<ArrayBuffer>,
  cols: number,
  params: readonly SamplingParams[],
  rng: Uint32Array<ArrayBuffer>,
): Promise<Uint32Array> {
  const gpu = await sample(logits, cols, params, rng);
  const cpu = reference(logits, cols, params, rng);
  assertEquals(Array.from(gpu.tokens), cpu.tokens, `${label}: tokens`);
  assertClose(gpu.logprobs, cpu.logprobs, { label: `${label}: log-probs`, ...TOL });
  return gpu.tokens;
}

/** `n` distinct-ish u32 seeds from `seed`. */
function seeds(n: number, seed: number): number[] {
  const next = mulberry32(seed);
  return Array.from({ length: n }, () => Math.floor(next() * 2 ** 32));
}

/** `rows` copies of one row of logits. */
function repeatRow(row: readonly number[], rows: number): Float32Array<ArrayBuffer> {
  return Float32Array.from({ length: rows * row.length }, (_, i) => row[i % row.length]);
}

/**
 * Rng data for `perStep * steps` rows: `perStep` seeds from `seed`, each at steps 0..steps-1
 * (rows r and r + perStep share a seed at consecutive steps).
 */
function seedStepGrid(perStep: number, steps: number, seed: number): Uint32Array<ArrayBuffer> {
  const list = seeds(perStep, seed);
  return Uint32Array.from({ length: 2 * perStep * steps }, (_, i) => {
    const r = i >> 1;
    return i % 2 ? Math.floor(r / perStep) : list[r % perStep];
  });
}

Deno.test("sampler: greedy rows pick the first index of the max, log-prob at T = 1", async () => {
  const shapes = [[5, 1], [6, 3], [9, 7], [33, 37], [4, 300], [3, 5003], [2, 50000]];
  for (const [i, [rows, cols]] of shapes.entries()) {
    const logits = uniformArray(rows * cols, 500 + i, -4, 4);
    const next = mulberry32(510 + i);
    // Two tied maxima per row, at first < second (one column: the only one).
    const firsts = Array.from({ length: rows }, (_, r) => {
      if (cols === 1) return 0;
      const first = Math.floor(next() * (cols - 1));
      const second = first + 1 + Math.floor(next() * (cols - 1 - first));
      logits[r * cols + first] = logits[r * cols + second] = 5;
      return first;
    });
    // Greedy ignores top-k and top-p.
    const params = Array.from({ length: rows }, (_, r) => ({
      temperature: r % 2 ? 0 : -1,
      topK: r % 3,
      topP: 0.5,
    }));
    const tokens = await checkAgainstReference(
      `greedy [${rows},${cols}]`,
      logits,
      cols,
      params,
      packRngState(seeds(rows, 520 + i)),
    );
    assertEquals(Array.from(tokens), firsts, `greedy [${rows},${cols}]: first maxima`);
  }
});

/** Settings cycling through greedy, temperatures, top-k (fractional, past V) and top-p values. */
function mixedParams(rows: number, offset: number): SamplingParams[] {
  const temperatures = [0.6, 1, 1.7, 0.25, 0];
  const topKs = [0, 1, 3, 10, 2.5, 20, 1e9];
  const topPs = [1, 0.9, 0.5, 0.2, 0, 1.5, 0.97, 0.7];
  return Array.from({ length: rows }, (_, r) => ({
    temperature: temperatures[r % temperatures.length],
    topK: topKs[(r + offset) % topKs.length],
    topP: topPs[(r + 2 * offset) % topPs.length],
  }));
}

Deno.test("sampler: sampled tokens equal the CPU reference's for the same u", async () => {
  const vocabRows = [
    { temperature: 1, topK: 40, topP: 0.9 },
    { temperature: 0.8, topP: 0.5 },
    { temperature: 1.2, topK: 1000 },
    { temperature: 1, topP: 0.97 },
  ];
  const cases = [
    { rows: 64, cols: 37, params: mixedParams(64, 0) },
    { rows: 40, cols: 37, params: mixedParams(40, 1), masked: true },
    ...[1, 2, 5, 7].map((cols, i) => ({ rows: 14, cols, params: mixedParams(14, 2 + i) })),
    { rows: 8, cols: 5003, params: mixedParams(8, 3) },
    // Rows of whole quads (the QUADS passes): mixed settings, and -inf logits.
    { rows: 24, cols: 44, params: mixedParams(24, 8) },
    { rows: 20, cols: 36, params: mixedParams(20, 9), masked: true },
    { rows: 4, cols: 50000, params: vocabRows },
  ];
  for (const [i, { rows, cols, params, masked }] of cases.entries()) {
    const logits = uniformArray(rows * cols, 600 + i, -6, 6);
    if (masked) {
      // Two thirds of each row masked to -inf (never column 0), e.g. by a grammar.
      const next = mulberry32(620 + i);
      logits.forEach((_, j) => {
        if (j % cols && next() < 2 / 3) logits[j] = -Infinity;
      });
    }
    await checkAgainstReference(
      `sample [${rows},${cols}]${masked ? " masked" : ""}`,
      logits,
      cols,
      params,
      packRngState(seeds(rows, 610 + i), 7 + i),
    );
  }
});

Deno.test("sampler: top-k = 1 samples the argmax", async () => {
  for (const [i, [rows, cols]] of [[64, 37], [2, 5003]].entries()) {
    const logits = uniformArray(rows * cols, 700 + i, -3, 3);
    const params = Array.from({ length: rows }, () => ({ temperature: 1.3, topK: 1 }));
    const { tokens } = await sample(logits, cols, params, packRngState(seeds(rows, 710 + i)));
    const greedy = params.map((_, r) =>
      sampleRowRef(rowOf(logits, cols, r), { temperature: 0 }, 0)
    );
    assertEquals(Array.from(tokens), greedy, `top-k 1 [${rows},${cols}]`);
  }
});

/**
 * Samples one row 256 times (64 seeds at 4 steps) and asserts the tokens are exactly the set
 * `expected`, which the reference's kept set must also be.
 */
async function checkKeptSet(
  label: string,
  row: readonly number[],
  params: SamplingParams,
  expected: readonly number[],
): Promise<void> {
  const kept = keptTokensRef(row, params).flatMap((k, c) => (k ? [c] : []));
  assertEquals(kept, expected, `${label}: reference kept set`);
  const all = Array.from({ length: 256 }, () => params);
  const { tokens } = await sample(repeatRow(row, 256), row.length, all, seedStepGrid(64, 4, 800));
  assertEquals([...new Set(tokens)].sort((a, b) => a - b), expected, `${label}: sampled set`);
}

Deno.test("sampler: top-k keeps the k largest logits, ties at the k-th all kept", async () => {
  const row = Array.from(uniformArray(37, 810, -2, 2));
  const top5 = row.map((_, c) => c).sort((a, b) => row[b] - row[a]).slice(0, 5).sort((a, b) =>
    a - b
  );
  await checkKeptSet("top-k 5 of 37", row, { temperature: 2, topK: 5 }, top5);
  await checkKeptSet("top-k 2 tied", [3, 1, 3, 2, 3, 0], { temperature: 1, topK: 2 }, [0, 2, 4]);
});

Deno.test("sampler: a share with more top tokens than a thread caches keeps top-k exact", async () => {
  // Columns 1024 i + j (quads 256 i: one thread's share at any workgroup size up to 256) hold,
  // in row order, 3 x 8, 2.95 x 8 and 3 x 4 over logits below 1.5: 20 tokens above the rest,
  // more than the 16 a thread caches during a search, at the search floors (~1.97 and ~2.88)
  // that the top-k search passes on its way to 3, so those passes must keep reading the row;
  // top-k 12 keeps exactly the 3s. A search reading a truncated cache there would count eight
  // 3s, stop below 2.95 and keep those too.
  const row = Array.from(uniformArray(4096, 815, -2, 1.5));
  const share = [0, 1, 2, 3, 4].flatMap((i) => [0, 1, 2, 3].map((j) => 1024 * i + j));
  share.forEach((c, n) => (row[c] = n >= 8 && n < 16 ? 2.95 : 3));
  const threes = share.filter((c) => row[c] === 3);
  await checkKeptSet("top-k 12, crowded share", row, { temperature: 1, topK: 12 }, threes);
});

Deno.test("sampler: top-p keeps the smallest prefix of sorted probabilities reaching p", async () => {
  const row = [0.05, 0.5, 0.15, 0.3].map(Math.log);
  await checkKeptSet("top-p 0.4", row, { temperature: 1, topP: 0.4 }, [1]);
  await checkKeptSet("top-p 0.75", row, { temperature: 1, topP: 0.75 }, [1, 3]);
  await checkKeptSet("top-p 0.85", row, { temperature: 1, topP: 0.85 }, [1, 2, 3]);
  await checkKeptSet("top-p 0.99", row, { temperature: 1, topP: 0.99 }, [0, 1, 2, 3]);
  // After top-k 2 the probabilities renormalise to (0.625, 0.375).
  await checkKeptSet("top-k 2, top-p 0.6", row, { temperature: 1, topK: 2, topP: 0.6 }, [1]);
  await checkKeptSet("top-k 2, top-p 0.7", row, { temperature: 1, topK: 2, topP: 0.7 }, [1, 3]);
  // Tied most likely tokens are all kept by top-p 0.
  await checkKeptSet("top-p 0 tied", [2, 5, 1, 5], { temperature: 1, topP: 0 }, [1, 3]);
});

/**
 * Samples `row` 2000 times (500 seeds at 4 steps) and checks the token frequencies against
 * `probs` with a chi-square test, and the log-probs against log_softmax(row / T).
 */
async function checkFrequencies(
  label: string,
  row: readonly number[],
  params: SamplingParams,
  probs: readonly number[],
): Promise<void> {
  const draws = 2000;
  const all = Array.from({ length: draws }, () => params);
  const { tokens, logprobs } = await sample(
    repeatRow(row, draws),
    row.length,
    all,
    seedStepGrid(500, 4, 900),
  );
  const counts = probs.map(() => 0);
  for (const tok of tokens) counts[tok]++;
  let chi2 = 0;
  probs.forEach((p, c) => {
    if (p > 0) chi2 += (counts[c] - draws * p) ** 2 / (draws * p);
    else if (counts[c] > 0) chi2 = Infinity;
  });
  // Critical values at P = 0.001 by degrees of freedom (tokens of positive probability - 1).
  const critical = [NaN, 10.83, 13.82, 16.27][probs.filter((p) => p > 0).length - 1];
  if (!(chi2 < critical)) {
    throw new Error(
      `${label}: chi-square ${chi2.toFixed(2)}: counts ${counts}, expected ${
        probs.map((p) => (p * draws).toFixed(0))
      }`,
    );
  }
  const expected = Array.from(tokens, (tok) => temperedLogprobRef(row, params.temperature, tok));
  assertClose(logprobs, expected, { label: `${label}: log-probs`, ...TOL });
}

Deno.test("sampler: sampling frequencies match softmax(z / T), renormalised after top-k/p", async () => {
  const row = [0.3, -1.2, 1.1, 0];
  const softmaxAt = (t: number) => row.map((_, c) => Math.exp(temperedLogprobRef(row, t, c)));
  await checkFrequencies("T 0.8", row, { temperature: 0.8 }, softmaxAt(0.8));
  // Top-k 3 drops token 1; top-p 0.7 then keeps tokens 2 and 0 (0.48 + 0.28 of the rest).
  const p = softmaxAt(1.5);
  const kept = p[0] + p[2];
  await checkFrequencies("T 1.5, top-k 3, top-p 0.7", row, {
    temperature: 1.5,
    topK: 3,
    topP: 0.7,
  }, [p[0] / kept, 0, p[2] / kept, 0]);
});

Deno.test("sampler: the same seed and step repeat the tokens; another step or seed differs", async () => {
  const [rows, cols] = [64, 37];
  const logits = uniformArray(rows * cols, 1000, -1, 1);
  const params = Array.from({ length: rows }, () => ({ temperature: 1, topP: 0.95 }));
  const base = seeds(rows, 1001);
  const draw = async (seedList: number[], step: number) =>
    Array.from((await sample(logits, cols, params, packRngState(seedList, step))).tokens);
  const first = await draw(base, 3);
  assertEquals(await draw(base, 3), first, "same seed and step");
  const differing = (other: number[]) => other.filter((tok, r) => tok !== first[r]).length;
  const nextStep = differing(await draw(base, 4));
  const otherSeeds = differing(await draw(base.map((s) => s + 1), 3));
  // Near-uniform over 37 tokens: about 36 of 64 rows would differ by chance alone.
  if (nextStep < 40 || otherSeeds < 40) {
    throw new Error(
      `too few rows differ: ${nextStep} (next step), ${otherSeeds} (other seeds) of 64`,
    );
  }
});

Deno.test("advanceRng: feeding its output back advances the sampler's step on the GPU", async () => {
  const gpu = await getGpu();
  const [rows, cols] = [16, 37];
  const g = new Graph();
  const z = g.input([rows, cols], "f32", "logits");
  const settings = g.input([rows, 3], "f32", "settings");
  const rng = g.input([rows, 2], "u32", "rng");
  const { tokens, logprobs } = sampleTokens(z, settings, rng);
  const next = advanceRng(rng);
  const exe = await compileGraph(gpu, [tokens, logprobs, next], "decode");
  const logits = uniformArray(rows * cols, 1100, -3, 3);
  const params = Array.from({ length: rows }, (_, r) => ({ temperature: 0.5 + r / 8, topK: r }));
  const seedList = seeds(rows, 1101);
  try {
    await exe.run(
      new Map<Tensor, Feed>([
        [z, logits],
        [settings, packSamplingSettings(params)],
        [rng, packRngState(seedList, 10)],
      ]),
    );
    // Two more decode steps with the state advanced on the GPU only.
    await exe.run(new Map([[rng, exe.buffer(next)]]));
    await exe.run(new Map([[rng, exe.buffer(next)]]));
    const [tok, , state] = await exe.read([tokens, logprobs, next]);
    assertEquals(Array.from(state), Array.from(packRngState(seedList, 13)), "state after 3 steps");
    const cpu = reference(logits, cols, params, packRngState(seedList, 12));
    assertEquals(Array.from(tok), cpu.tokens, "tokens of step 12");
  } finally {
    exe.destroy();
  }
});

Deno.test("temperedLogprobs: teacher-forced log-probs at each row's temperature", async () => {
  const [rows, cols] = [6, 300];
  const logits = uniformArray(rows * cols, 1200, -8, 8);
  const temps = [1, 0.7, 2.5, 0, -1, 0.05];
  const targets = Int32Array.from([0, 299, 17, 150, 300, -1]); // the last two out of range
  const [lp] = await runOps(
    [
      { shape: [rows, cols], data: logits },
      {
        shape: [rows, 3],
        data: packSamplingSettings(temps.map((temperature) => ({ temperature }))),
      },
      { shape: [rows], data: targets, dtype: "i32" },
    ],
    temperedLogprobs,
  );
  const expected = temps.map((t, r) =>
    r < 4 ? temperedLogprobRef(rowOf(logits, cols, r), t, targets[r]) : 0
  );
  assertClose(lp, expected, { label: "tempered log-probs", ...TOL });
});

Deno.test("sampler ops reject wrong dtypes and shapes, naming the op", () => {
  const g = new Graph();
  const logits = g.input([4, 9], "f32", "logits");
  const settings = g.input([4, 3], "f32", "settings");
  const rng = g.input([4, 2], "u32", "rng");
  assertThrows(
    () => sampleTokens(g.input([4, 9], "i32", "z"), settings, rng),
    Error,
    '"sample_tokens" to z',
  );
  assertThrows(() => sampleTokens(g.input([2, 4, 9]), settings, rng), Error, "shape [N,V]");
  assertThrows(
    () => sampleTokens(logits, g.input([4, 4], "f32", "s"), rng),
    Error,
    "settings of dtype f32 and shape [4,3]",
  );
  assertThrows(
    () => sampleTokens(logits, settings, g.input([4, 2], "i32", "r")),
    Error,
    "rng state of dtype u32",
  );
  assertThrows(
    () => temperedLogprobs(logits, settings, g.input([4], "f32", "t")),
    Error,
    '"tempered_logprobs"',
  );
  assertThrows(
    () => advanceRng(g.input([4, 3], "u32", "r3")),
    Error,
    '"advance_rng": expected rng state of dtype u32 and shape [N,2]',
  );
});
