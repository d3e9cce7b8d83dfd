/**
 * The sampler's logits processors against their CPU references on odd shapes: bias (a -inf one
 * excluding a token), frequency and presence penalties from token counts, counts updated in
 * place from sampled tokens (a token past the vocabulary skipped), and the two ops chained as the
 * engine chains them over steps.
 */

import { getGpu } from "../../src/gpu/device.ts";
import { TENSOR_USAGE } from "../../src/gpu/buffer_pool.ts";
import { compileGraph } from "../../src/graph/executable.ts";
import { Graph } from "../../src/graph/graph.ts";
import { countTokens, processLogits } from "../../src/engine/logits_processor.ts";
import { packRngState, packSamplingSettings, sampleTokens } from "../../src/engine/sampler.ts";
import type { HostData, Tensor } from "../../src/graph/tensor.ts";
import { countTokensRef, processLogitsRef } from "../../src/reference/logits_processor.ts";
import { uniformArray } from "../../src/util/random.ts";
import { assertClose } from "../_assert_close.ts";
import { assertEquals } from "../_asserts.ts";
import { runOps } from "../_harness.ts";

Deno.test("processLogits: bias and penalties per row, -inf bias kept -inf", async () => {
  for (const [rows, cols] of [[1, 7], [3, 37], [5, 130]]) {
    const z = uniformArray(rows * cols, rows, -4, 4);
    const bias = uniformArray(rows * cols, cols, -2, 2);
    bias[1] = -Infinity;
    const counts = Float32Array.from(
      { length: rows * cols },
      (_, i) => (i * 7) % 5 === 0 ? (i % 3) : 0,
    );
    const penalties = Float32Array.from(
      { length: rows * 2 },
      (_, i) => (i % 2 ? 0.5 : -1.25) * (1 + i),
    );
    const [out] = await runOps(
      [
        { shape: [rows, cols], data: z },
        { shape: [rows, cols], data: bias },
        { shape: [rows, cols], data: counts },
        { shape: [rows, 2], data: penalties },
      ],
      (a, b, c, p) => processLogits(a, b, c, p),
    );
    const expected = processLogitsRef(z, bias, counts, penalties, cols);
    assertEquals((out as Float32Array)[1], -Infinity);
    assertClose(Array.from(out as Float32Array).slice(2), Array.from(expected).slice(2), {
      atol: 1e-5,
      rtol: 1e-5,
    });
  }
});

/** Index of the first maximum of `row`. */
function argmax(row: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i] > row[best]) best = i;
  return best;
}

Deno.test("countTokens after greedy sampling, in place on a variable over steps: penalties change the picks", async () => {
  const gpu = await getGpu();
  const [rows, cols] = [3, 11];
  const buffer = gpu.device.createBuffer({ size: rows * cols * 4, usage: TENSOR_USAGE });
  const g = new Graph();
  const counts = g.variable({ name: "counts", shape: [rows, cols], dtype: "f32", buffer });
  const inputs = {
    z: g.input([rows, cols], "f32", "z"),
    bias: g.input([rows, cols], "f32", "bias"),
    penalties: g.input([rows, 2], "f32", "penalties"),
    settings: g.input([rows, 3], "f32", "settings"),
    rng: g.input([rows, 2], "u32", "rng"),
  };
  // As in the engine: the token is sampled from the adjusted logits, then counted.
  const adjusted = processLogits(inputs.z, inputs.bias, counts, inputs.penalties);
  const { tokens } = sampleTokens(adjusted, inputs.settings, inputs.rng);
  const updated = countTokens(counts, tokens);
  const exe = await compileGraph(gpu, [tokens, updated], "count test");
  const z = uniformArray(rows * cols, 9, -1, 1);
  const bias = new Float32Array(rows * cols);
  bias[2] = 3; // row 0 prefers token 2 until its frequency penalty outweighs the bias
  bias[cols + 7] = -Infinity;
  const penalties = Float32Array.from([1.5, 0, 0, 0.75, 0.4, 0.4]);
  try {
    let expected: Float64Array = new Float64Array(rows * cols);
    const picks: number[][] = [];
    for (let step = 0; step < 6; step++) {
      const want = Array.from({ length: rows }, (_, r) => {
        const adjustedRef = processLogitsRef(z, bias, expected, penalties, cols);
        return argmax(adjustedRef.subarray(r * cols, (r + 1) * cols));
      });
      await exe.run(
        new Map<Tensor, HostData>([
          [inputs.z, z],
          [inputs.bias, bias],
          [inputs.penalties, penalties],
          [inputs.settings, packSamplingSettings(Array(rows).fill({ temperature: 0 }))],
          [inputs.rng, packRngState(Array(rows).fill(1), step)],
        ]),
      );
      const [t, c] = await exe.read([tokens, updated]);
      assertEquals(Array.from(t as Uint32Array), want, `step ${step}`);
      expected = countTokensRef(expected, want, cols);
      assertEquals(Array.from(c as Float32Array), Array.from(expected));
      picks.push(want);
    }
    // Row 0 leaves token 2 once its count costs more than the bias gives; row 1 never draws 7.
    assertEquals(picks[0][0], 2);
    assertEquals(new Set(picks.map((p) => p[0])).size > 1, true);
    assertEquals(picks.some((p) => p[1] === 7), false);
  } finally {
    exe.destroy();
    buffer.destroy();
  }
});
