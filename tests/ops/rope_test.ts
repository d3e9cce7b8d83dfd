/**
 * Rotary position embedding: HF's f32 inverse frequencies, forward against the CPU reference on
 * odd head dims and ranks, positions that are not 0..T-1 (a KV-cache continuation, packed
 * segments, large positions), i32 and u32 positions, and backward (the inverse rotation, and
 * its own backward) against finite differences.
 */

import { grad } from "../../src/graph/autodiff.ts";
import { Graph } from "../../src/graph/graph.ts";
import type { Tensor } from "../../src/graph/tensor.ts";
import { rope, ropeInvFreq } from "../../src/ops/rope.ts";
import { ropeRef } from "../../src/reference/rope.ts";
import { assertClose } from "../_assert_close.ts";
import { assertEquals, assertThrows } from "../_asserts.ts";
import { checkGradients, randomInput, runOps, type TestInput } from "../_harness.ts";

const TOL = { atol: 2e-6, rtol: 1e-5 };

/** i32 positions of `shape`. */
function positionsInput(shape: readonly number[], values: readonly number[]): TestInput {
  return { shape, data: Int32Array.from(values), dtype: "i32" };
}

/** 0..seq-1 for each of `batch` sequences. */
function arangePositions(batch: number, seq: number): number[] {
  return Array.from({ length: batch * seq }, (_, i) => i % seq);
}

/** Runs rope on x of `shape` at `positions` and compares with the reference. */
async function checkRope(
  shape: readonly number[],
  positions: readonly number[],
  theta: number,
  label: string,
  seed = 1,
) {
  const x = randomInput(shape, seed);
  const pos = positionsInput(shape.slice(0, -2), positions);
  const [heads, headDim] = shape.slice(-2);
  const invFreq = ropeInvFreq(theta, headDim);
  const [y] = await runOps([x, pos], (t, p) => rope(t, p, invFreq));
  assertClose(y, ropeRef(x.data, pos.data, heads, headDim, invFreq), { label, ...TOL });
}

Deno.test("ropeInvFreq: HF's f32 1 / theta^(2i/d)", () => {
  // Expected values from numpy's f32 `1 / theta ** (arange(0, d, 2).astype(f32) / d)`, the
  // computation of HF's inv_freq: each step rounds to f32, so 1e6^(2/6) is not exactly 100.
  assertEquals(ropeInvFreq(10000, 8), Float32Array.of(1, 0.1, 0.01, 0.001));
  assertEquals(
    ropeInvFreq(1e6, 6),
    Float32Array.of(1, 0.009999998845160007, 9.999996836995706e-5),
  );
  const qwen3 = ropeInvFreq(1e6, 128);
  assertEquals(
    [...qwen3.slice(0, 4), qwen3[63]],
    [1, 0.8058422207832336, 0.6493816375732422, 0.5232991576194763, 1.2409377632138785e-6],
  );
});

Deno.test("rope: forward matches CPU on odd head dims and ranks", async () => {
  const cases = [
    { shape: [2, 5, 3, 6], theta: 10000 }, // head_dim 6
    { shape: [1, 7, 2, 10], theta: 10000 }, // head_dim 10
    { shape: [3, 4, 1, 2], theta: 500000 }, // head_dim 2: one pair
    { shape: [1, 3, 4, 128], theta: 1e6 }, // Qwen3's head_dim and theta
    { shape: [3, 100, 3, 6], theta: 10000 }, // 300 tokens x 3 frequencies: several workgroups
    // Four frequencies a thread (main4): 300 tokens x 3 quads of them, several workgroups.
    { shape: [3, 100, 3, 24], theta: 10000 },
  ];
  for (const [i, { shape, theta }] of cases.entries()) {
    await checkRope(shape, arangePositions(shape[0], shape[1]), theta, `rope ${shape}`, 10 + i);
  }
  await checkRope([5, 2, 8], [0, 1, 2, 3, 4], 10000, "rope [T,H,D] with [T] positions");
});

Deno.test("rope: KV-cache offsets and packed segments match CPU", async () => {
  // Batch 0 continues at position 5; batch 1 packs two sequences that each restart at 0.
  const positions = [5, 6, 7, 8, 9, 10, 11, 0, 1, 2, 0, 1, 2, 3];
  await checkRope([2, 7, 3, 6], positions, 10000, "rope offset/packed", 20);
});

Deno.test("rope: a continuation and a packed segment equal the whole-sequence result", async () => {
  const [heads, headDim] = [2, 10];
  const x = randomInput([1, 8, heads, headDim], 30);
  const tail = { shape: [1, 3, heads, headDim], data: x.data.slice(5 * heads * headDim) };
  const apply = (t: Tensor, p: Tensor) => rope(t, p, ropeInvFreq(10000, headDim));
  const [whole] = await runOps([x, positionsInput([1, 8], arangePositions(1, 8))], apply);
  const [cont] = await runOps([tail, positionsInput([1, 3], [5, 6, 7])], apply);
  assertEquals(cont, whole.slice(5 * heads * headDim), "positions 5..7 of 0..7");
  // Tokens 3..7 packed as a second segment that restarts at 0 equal tokens 0..4 alone.
  const packed = {
    ...x,
    data: Float32Array.from([...x.data.slice(0, 60), ...x.data.slice(0, 100)]),
  };
  const [seg] = await runOps([packed, positionsInput([1, 8], [0, 1, 2, 0, 1, 2, 3, 4])], apply);
  assertEquals(seg.slice(60), whole.slice(0, 100), "segment restarting at 0");
});

Deno.test("rope: large positions keep their accuracy", async () => {
  // Angles up to 4e5 rad: cos and sin of an accurately reduced angle, as torch's f32 ones.
  const positions = [1000, 12345, 30000, 65535, 100000, 131071, 262143, 400000];
  await checkRope([1, 8, 2, 8], positions, 10000, "rope large positions", 40);
});

Deno.test("rope: u32 positions give the i32 result", async () => {
  const x = randomInput([2, 3, 2, 6], 50);
  const values = [4, 5, 6, 0, 1, 2];
  const apply = (t: Tensor, p: Tensor) => rope(t, p, ropeInvFreq(10000, 6));
  const [a] = await runOps([x, positionsInput([2, 3], values)], apply);
  const u32 = { shape: [2, 3], data: Uint32Array.from(values), dtype: "u32" as const };
  const [b] = await runOps([x, u32], apply);
  assertEquals(b, a);
});

Deno.test("rope: backward matches finite differences (positions get none)", async () => {
  const cases = [
    { shape: [2, 3, 2, 6], positions: arangePositions(2, 3) },
    { shape: [2, 4, 1, 10], positions: [5, 6, 7, 8, 0, 1, 0, 1] },
    { shape: [1, 2, 3, 2], positions: [100000, 7] },
    { shape: [2, 3, 3, 16], positions: [2, 3, 4, 9, 0, 1] }, // four frequencies a thread
  ];
  for (const [i, { shape, positions }] of cases.entries()) {
    const [heads, headDim] = shape.slice(-2);
    await checkGradients({
      label: `rope ${shape}`,
      inputs: [randomInput(shape, 60 + i), positionsInput(shape.slice(0, -2), positions)],
      wrt: [0],
      build: (t, p) => rope(t, p, ropeInvFreq(10000, headDim)),
      reference: (t, p) => ropeRef(t, p, heads, headDim, ropeInvFreq(10000, headDim)),
    });
  }
});

Deno.test("rope: the inverse rotation (the gradient op) differentiates too", async () => {
  // dx of sum(rope(x) * s) is the inverse rotation of s; differentiate that in s. Rotating by
  // -angle is rope at negated positions (f32(-p * f) = -f32(p * f)).
  const shape = [2, 3, 2, 6];
  const positions = [3, 4, 5, 0, 1, 2];
  const x = randomInput(shape, 70).data;
  await checkGradients({
    label: "rope_inverse",
    inputs: [randomInput(shape, 71), positionsInput([2, 3], positions)],
    wrt: [0],
    build: (s, p) => {
      const xt = s.graph.constant(x, shape, "x");
      return grad(rope(xt, p, ropeInvFreq(10000, 6)), [xt], s)[0];
    },
    reference: (s, p) => ropeRef(s, p.map((v) => -v), 2, 6, ropeInvFreq(10000, 6)),
  });
});

Deno.test("rope rejects bad inputs, naming the op and what it expected", () => {
  const g = new Graph();
  const x = g.input([2, 3, 4, 6], "f32", "q");
  const pos = g.input([2, 3], "i32", "pos");
  const invFreq = ropeInvFreq(1e4, 6);
  assertThrows(
    () => rope(g.input([2, 3, 4, 5], "f32", "odd"), pos, ropeInvFreq(1e4, 4)),
    Error,
    "even head_dim",
  );
  assertThrows(
    () => rope(x, g.input([2, 3], "f32", "fpos"), invFreq),
    Error,
    '"rope" to q[2,3,4,6]:f32: expected i32 or u32 positions of shape [2,3], received fpos[2,3]:f32',
  );
  assertThrows(() => rope(x, g.input([6], "i32", "flat"), invFreq), Error, "received flat[6]:i32");
  assertThrows(
    () => rope(x, pos, ropeInvFreq(1e4, 4)),
    Error,
    "expected an even head_dim and 3 finite inverse frequencies >= 0, received 2",
  );
  assertThrows(() => rope(x, pos, Float32Array.of(1, NaN, 0.1)), Error, "finite inverse");
});
