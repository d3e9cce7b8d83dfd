/**
 * Validate mode (`RFT_VALIDATE=1`): a graph of ops on odd shapes runs one op at a time with each
 * op's CPU reference checked; a kernel that disagrees with its reference is reported at the first
 * mismatch, naming the op; big tensors and ops without a reference run unchecked; off by default.
 */

import { assertEquals, assertRejects } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { compileGraph, type Executable } from "../../src/graph/executable.ts";
import { Graph } from "../../src/graph/graph.ts";
import type { OpDef } from "../../src/graph/op.ts";
import type { HostData, Tensor } from "../../src/graph/tensor.ts";
import { causalAttention } from "../../src/ops/attention.ts";
import { add } from "../../src/ops/binary.ts";
import { embedding } from "../../src/ops/embedding.ts";
import { layerNorm } from "../../src/ops/layernorm.ts";
import { matmul } from "../../src/ops/matmul.ts";
import { sumLast } from "../../src/ops/reduce.ts";
import { rope, ropeInvFreq } from "../../src/ops/rope.ts";
import { sliceLast } from "../../src/ops/slice.ts";
import { logSoftmax } from "../../src/ops/softmax.ts";
import { tokenLogprobs } from "../../src/ops/token_logprobs.ts";
import { gelu, scale } from "../../src/ops/unary.ts";
import { tokenLogprobsRef } from "../../src/reference/token_logprobs.ts";
import { uniformArray } from "../../src/util/random.ts";

/** Runs `fn` with `RFT_VALIDATE` set to `value` (unset for undefined), restoring it after. */
async function withValidate<T>(value: string | undefined, fn: () => Promise<T>): Promise<T> {
  const before = Deno.env.get("RFT_VALIDATE");
  if (value === undefined) Deno.env.delete("RFT_VALIDATE");
  else Deno.env.set("RFT_VALIDATE", value);
  try {
    return await fn();
  } finally {
    if (before === undefined) Deno.env.delete("RFT_VALIDATE");
    else Deno.env.set("RFT_VALIDATE", before);
  }
}

/** Compiles `outputs`, runs once with `feeds` and returns the executable and the outputs. */
async function runOnce(
  outputs: Tensor[],
  feeds: Map<Tensor, HostData>,
): Promise<{ exe: Executable; values: HostData[] }> {
  const exe = await compileGraph(await getGpu(), outputs, "validate_test");
  await exe.run(feeds);
  return { exe, values: await exe.read(outputs) };
}

Deno.test("RFT_VALIDATE=1 checks every op of a small model-like graph against its reference", async () => {
  const g = new Graph();
  const ids = g.input([5], "i32", "ids");
  const table = g.input([11, 7], "f32", "table");
  const w = g.input([7, 13], "f32", "w");
  const bias = g.input([13], "f32", "bias");
  const lnW = g.input([13], "f32", "ln_w");
  const targets = g.input([5], "i32", "targets");
  const h = gelu(add(matmul(embedding(table, ids), w), bias));
  const z = sliceLast(layerNorm(h, lnW, bias, 1e-5), 1, 12);
  const logprobs = tokenLogprobs(z, targets);
  const total = sumLast(logSoftmax(z));
  const idData = Int32Array.from([3, 0, 10, 7, 3]);
  const targetData = Int32Array.from([0, 11, 5, 2, 9]);
  const feeds = new Map<Tensor, HostData>([
    [ids, idData],
    [table, uniformArray(77, 1)],
    [w, uniformArray(91, 2)],
    [bias, uniformArray(13, 3)],
    [lnW, uniformArray(13, 4)],
    [targets, targetData],
  ]);
  const { exe, values } = await withValidate("1", () => runOnce([logprobs, total, z], feeds));
  try {
    assertEquals(exe.lastValidation, {
      checked: [
        "embedding",
        "matmul",
        "add",
        "unary",
        "layer_norm",
        "slice_last",
        "token_stats",
        "slice_last",
        "log_softmax",
        "sum_last",
      ],
      unchecked: [],
    });
    // The validated run computes what an ordinary run does.
    assertClose(values[0], tokenLogprobsRef(values[2], 12, targetData), { atol: 1e-5, rtol: 1e-5 });
  } finally {
    exe.destroy();
  }
});

Deno.test("RFT_VALIDATE=1 checks rope and grouped-query causal attention with padding", async () => {
  const g = new Graph();
  const q = g.input([2, 5, 4, 6], "f32", "q");
  const k = g.input([2, 5, 2, 6], "f32", "k");
  const v = g.input([2, 5, 2, 6], "f32", "v");
  const positions = g.input([2, 5], "i32", "positions");
  const segments = g.input([2, 5], "i32", "segments");
  const invFreq = ropeInvFreq(1e4, 6);
  const out = causalAttention(
    rope(q, positions, invFreq),
    rope(k, positions, invFreq),
    v,
    segments,
  );
  const feeds = new Map<Tensor, HostData>([
    [q, uniformArray(240, 7)],
    [k, uniformArray(120, 8)],
    [v, uniformArray(120, 9)],
    [positions, Int32Array.from([0, 1, 2, 3, 4, 0, 1, 0, 1, 2])],
    [segments, Int32Array.from([0, 0, 0, 0, 0, 0, 0, 1, 1, -1])],
  ]);
  const { exe } = await withValidate("1", () => runOnce([out], feeds));
  exe.destroy();
  assertEquals(exe.lastValidation, {
    checked: ["rope", "rope", "causal_attention"],
    unchecked: [],
  });
});

Deno.test("RFT_VALIDATE=1 reports the first element where a kernel and its reference differ", async () => {
  const g = new Graph();
  const x = g.input([3, 5], "f32", "x");
  const doubled = scale(x, 2);
  if (doubled.source.kind !== "op") throw new Error("scale made no op");
  // The real `x * 2` kernel under a reference that says `x * 3`: a stand-in for a wrong kernel.
  const wrong: OpDef<unknown> = {
    ...doubled.source.op,
    name: "triple",
    reference: ([data]) => Array.from(data, (v) => 3 * v),
  };
  const y = g.apply(wrong, [x], doubled.source.attrs);
  const data = Float32Array.from({ length: 15 }, (_, i) => i);
  await withValidate("1", async () => {
    const exe = await compileGraph(await getGpu(), [y], "validate_test");
    try {
      await assertRejects(
        () => exe.run(new Map([[x, data]])),
        Error,
        `RFT_VALIDATE: op "triple" -> ${y} in graph "validate_test" differs from its CPU ` +
          "reference at index 1: GPU 2, reference 3",
      );
    } finally {
      exe.destroy();
    }
  });
});

Deno.test("ops over big tensors run unchecked, and validation is off unless RFT_VALIDATE=1", async () => {
  const g = new Graph();
  const big = g.input([65537], "f32", "big");
  const small = g.input([9], "f32", "small");
  const outputs = [scale(big, 2), scale(small, 2)];
  const feeds = new Map<Tensor, HostData>([
    [big, uniformArray(65537, 5)],
    [small, uniformArray(9, 6)],
  ]);
  const on = await withValidate("1", () => runOnce(outputs, feeds));
  on.exe.destroy();
  assertEquals(on.exe.lastValidation, { checked: ["unary"], unchecked: ["unary"] });
  const off = await withValidate(undefined, () => runOnce(outputs, feeds));
  off.exe.destroy();
  assertEquals(off.exe.lastValidation, undefined);
  assertClose(on.values[0], off.values[0], { atol: 0, rtol: 0 });
});
