/**
 * The families at the real shapes of the checkpoints people fine-tune, with random weights: the
 * parameter count of each config.json as published (a check of the description and the
 * parameter specs against numbers measured elsewhere), and logits against the f64 reference at
 * real widths, vocabularies (sharded on this adapter) and RoPE parameters.
 */

import { assertEquals } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { initParameters } from "../../src/model/init.ts";
import { parameterSpecs } from "../../src/model/parameters.ts";
import { createModel } from "../../src/model/policy.ts";
import { shapeSize } from "../../src/graph/tensor.ts";
import { compileGraph } from "../../src/graph/executable.ts";
import { Graph } from "../../src/graph/graph.ts";
import { buildLogits } from "../../src/model/transformer.ts";
import { referenceLogits } from "../../src/model/transformer_reference.ts";
import {
  GEMMA2_2B,
  GEMMA3_1B,
  GEMMA3_270M,
  GEMMA_2B,
  LLAMA32_1B,
  OLMO2_1B,
  PHI3_MINI_4K,
  PHI4_MINI,
  SMOLLM3_3B,
  STABLELM2_1_6B,
} from "./_published_configs.ts";

/** Parameters of a config.json's model. */
function parameterCount(raw: Record<string, unknown>): number {
  return parameterSpecs(parseHfConfig(raw)).reduce((n, s) => n + shapeSize(s.shape), 0);
}

Deno.test("real shapes: parameter counts of the published configs", () => {
  assertEquals(parameterCount(LLAMA32_1B), 1_235_814_400);
  assertEquals(parameterCount(GEMMA3_270M), 268_098_176);
  assertEquals(parameterCount(GEMMA3_1B), 999_885_952);
  assertEquals(parameterCount(PHI3_MINI_4K), 3_821_079_552);
  assertEquals(parameterCount(OLMO2_1B), 1_484_916_736);
  assertEquals(parameterCount(PHI4_MINI), 3_836_021_760);
  assertEquals(parameterCount(SMOLLM3_3B), 3_075_098_624);
  assertEquals(parameterCount(STABLELM2_1_6B), 1_644_515_328);
  assertEquals(parameterCount(GEMMA2_2B), 2_614_341_888);
  assertEquals(parameterCount(GEMMA_2B), 2_506_172_416);
});

/**
 * Logits of `tokens` on a model of `raw` with random weights (HF's init, std 0.02) against the
 * f64 reference, within 1e-5.
 */
async function checkLogits(raw: Record<string, unknown>, tokens: number[], label: string) {
  const params = initParameters(parseHfConfig(raw), 5);
  const model = await createModel(raw, params);
  const g = new Graph();
  const input = (name: string) => g.input([1, tokens.length], "i32", name);
  const inputs = { ids: input("ids"), positions: input("positions"), segments: input("segments") };
  const logits = buildLogits(model.config, model.weights(g), inputs);
  const exe = await compileGraph(model.gpu, [logits], label);
  try {
    await exe.run(
      new Map([
        [inputs.ids, Int32Array.from(tokens)],
        [inputs.positions, Int32Array.from(tokens, (_, t) => t)],
        [inputs.segments, new Int32Array(tokens.length)],
      ]),
    );
    const [got] = await exe.read([logits]);
    const expected = referenceLogits(model.config, params, tokens);
    assertClose(got, expected, { atol: 1e-5, rtol: 0, label });
  } finally {
    exe.destroy();
    model.destroy();
  }
}

Deno.test("real shapes: Llama-3.2-1B's layer, vocabulary and RoPE (one of its 16 layers) match the f64 reference", async () => {
  // One layer keeps the test within ~3 GB: the tied 128256 x 2048 embedding alone is 1 GB in f32.
  const raw = { ...LLAMA32_1B, num_hidden_layers: 1 };
  await checkLogits(
    raw,
    [128000, 791, 4062, 14198, 39935, 35308, 927, 279],
    "llama 3.2",
  );
});

Deno.test("real shapes: gemma-3-270m (all 18 layers, 262144 tokens) matches the f64 reference", async () => {
  await checkLogits(GEMMA3_270M, [2, 818, 5279, 529, 7001, 563, 9079, 236761], "gemma 3 270m");
});
