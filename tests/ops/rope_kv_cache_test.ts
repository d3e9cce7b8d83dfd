/**
 * ropeKvCache: the rotated queries and both caches against the CPU references (RoPE, the row
 * scatter) on odd shapes (3 slots, 6 query heads over 2 kv heads, one and three frequency quads,
 * padding and a position past the cache), readers of its caches in the same graph (one that
 * depends on the write only through the cache view; the attention, against the reference and the
 * three-op path), the same from q, k and v side by side (packedRopeKvCache), and its errors.
 */

import { getGpu } from "../../src/gpu/device.ts";
import { compileGraph } from "../../src/graph/executable.ts";
import { Graph } from "../../src/graph/graph.ts";
import { cachedAttention } from "../../src/ops/cached_attention.ts";
import { writeKvCache } from "../../src/ops/kv_cache.ts";
import { rope, ropeInvFreq } from "../../src/ops/rope.ts";
import { packedRopeKvCache, ropeKvCache } from "../../src/ops/rope_kv_cache.ts";
import { neg } from "../../src/ops/unary.ts";
import { cachedAttentionRef, writeKvCacheRef } from "../../src/reference/kv_cache.ts";
import { ropeRef } from "../../src/reference/rope.ts";
import { assertClose } from "../_assert_close.ts";
import { assertRejects, assertThrows } from "../_asserts.ts";
import { randomInput, runOps, type TestInput } from "../_harness.ts";

/** Tokens of 3 slots at the positions of a two-token step: padding, one past the cache. */
const POSITIONS = [[0, 5], [-1, 3], [6, 9]];

/**
 * The fused step and an attention over its caches, against the references and against rope and
 * two writeKvCache ops, for 3 slots x 2 tokens, 6 query heads, 2 kv heads of `headDim`, a cache
 * of 7 rows holding random values.
 */
async function checkFused(headDim: number, seed: number) {
  const shape = { slots: 3, tokens: 2, maxLen: 7, heads: 6, kvHeads: 2, headDim };
  const invFreq = ropeInvFreq(10000, headDim);
  const q = randomInput([3, 2, 6, headDim], seed);
  const k = randomInput([3, 2, 2, headDim], seed + 1);
  const v = randomInput([3, 2, 2, headDim], seed + 2);
  const keyCache = randomInput([3, 7, 2, headDim], seed + 3);
  const valueCache = randomInput([3, 7, 2, headDim], seed + 4);
  const positions: TestInput = {
    shape: [3, 2],
    data: Int32Array.from(POSITIONS.flat()),
    dtype: "i32",
  };
  const inputs = [q, k, v, keyCache, valueCache, positions];
  // The negated value cache comes first: its op runs after the write only through the view.
  const [negated, queries, keys, values, attended] = await runOps(
    inputs,
    (q, k, v, kc, vc, pos) => {
      const r = ropeKvCache(q, k, v, kc, vc, pos, invFreq);
      const attended = cachedAttention(r.queries, r.keys, r.values, pos);
      return [neg(r.values), r.queries, r.keys, r.values, attended];
    },
  );
  const wantQueries = ropeRef(q.data, positions.data, 6, headDim, invFreq);
  const wantKeys = writeKvCacheRef(
    keyCache.data,
    ropeRef(k.data, positions.data, 2, headDim, invFreq),
    positions.data,
    shape,
  );
  const wantValues = writeKvCacheRef(valueCache.data, v.data, positions.data, shape);
  const tol = { atol: 1e-6, rtol: 1e-6 };
  assertClose(queries, wantQueries, { ...tol, label: `queries, head dim ${headDim}` });
  assertClose(keys, wantKeys, { ...tol, label: `key cache, head dim ${headDim}` });
  assertClose(values, wantValues, { atol: 0, rtol: 0, label: `value cache, head dim ${headDim}` });
  assertClose(negated, wantValues.map((x) => -x), {
    atol: 0,
    rtol: 0,
    label: `a reader of the value cache, head dim ${headDim}`,
  });
  assertClose(
    attended,
    cachedAttentionRef(wantQueries, wantKeys, wantValues, positions.data, shape),
    { atol: 1e-5, rtol: 1e-4, label: `attention, head dim ${headDim}` },
  );
  const [separate] = await runOps(inputs, (q, k, v, kc, vc, pos) => [
    cachedAttention(
      rope(q, pos, invFreq),
      writeKvCache(kc, k, pos, { invFreq }),
      writeKvCache(vc, v, pos),
      pos,
    ),
  ]);
  assertClose(attended, separate, { ...tol, label: `fused vs three ops, head dim ${headDim}` });
  // q, k and v side by side, each token's row [q (6 heads), k (2), v (2)].
  const qkv = { shape: [3, 2, 10 * headDim], data: sideBySide([q, k, v], 3 * 2) };
  const packed = await runOps([qkv, keyCache, valueCache, positions], (qkv, kc, vc, pos) => {
    const r = packedRopeKvCache(qkv, kc, vc, pos, invFreq);
    return [r.queries, r.keys, r.values];
  });
  const label = `side by side, head dim ${headDim}`;
  assertClose(packed[0], wantQueries, { ...tol, label: `queries ${label}` });
  assertClose(packed[1], wantKeys, { ...tol, label: `key cache ${label}` });
  assertClose(packed[2], wantValues, { atol: 0, rtol: 0, label: `value cache ${label}` });
}

/** The rows of `parts` (each `rows` rows) side by side: row r of each in turn. */
function sideBySide(parts: TestInput[], rows: number): Float32Array<ArrayBuffer> {
  const widths = parts.map((t) => t.data.length / rows);
  const out = new Float32Array(rows * widths.reduce((a, b) => a + b, 0));
  let at = 0;
  for (let r = 0; r < rows; r++) {
    parts.forEach((t, i) => {
      out.set(t.data.subarray(r * widths[i], (r + 1) * widths[i]), at);
      at += widths[i];
    });
  }
  return out;
}

Deno.test("ropeKvCache: rotated queries and both caches as the references, odd shapes", async () => {
  await checkFused(8, 1300); // one frequency quad per head
  await checkFused(24, 1320); // three
});

Deno.test("ropeKvCache refuses head dims not a multiple of 8, a bad table, a written op result", async () => {
  const g = new Graph();
  const positions = g.input([1, 1], "i32");
  const rows = (heads: number, d: number) => g.input([1, 1, heads, d]);
  const cache = (d: number) => g.input([1, 4, 1, d]);
  const f = (d: number) => ropeInvFreq(1e4, d);
  assertThrows(
    () =>
      ropeKvCache(rows(2, 12), rows(1, 12), rows(1, 12), cache(12), cache(12), positions, f(12)),
    Error,
    "head_dim a multiple of 8",
  );
  assertThrows(
    () => ropeKvCache(rows(2, 8), rows(1, 8), rows(1, 8), cache(8), cache(8), positions, f(6)),
    Error,
    "expected an even head_dim and 4 finite inverse frequencies >= 0, received 3",
  );
  assertThrows(
    () => ropeKvCache(rows(3, 8), rows(2, 8), rows(2, 8), cache(8), cache(8), positions, f(8)),
    Error,
    "do not share 2 kv heads evenly",
  );
  assertThrows(
    () => packedRopeKvCache(g.input([1, 1, 36]), cache(8), cache(8), positions, f(8)),
    Error,
    "heads a multiple of kv_heads",
  );
  const written = ropeKvCache(
    rows(2, 8),
    rows(1, 8),
    rows(1, 8),
    neg(cache(8)),
    cache(8),
    positions,
    f(8),
  );
  await assertRejects(
    async () => (await compileGraph(await getGpu(), [written.queries])).destroy(),
    Error,
    "an op's result (expected a variable or a graph input)",
  );
});
