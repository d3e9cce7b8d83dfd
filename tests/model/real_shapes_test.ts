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
import { LLAMA32_ROPE_SCALING } from "../_tiny_families.ts";

/** Llama-3.2-1B's config.json (the architecture fields). */
const LLAMA32_1B = {
  architectures: ["LlamaForCausalLM"],
  model_type: "llama",
  hidden_size: 2048,
  intermediate_size: 8192,
  num_hidden_layers: 16,
  num_attention_heads: 32,
  num_key_value_heads: 8,
  head_dim: 64,
  hidden_act: "silu",
  rms_norm_eps: 1e-5,
  rope_theta: 500000,
  rope_scaling: LLAMA32_ROPE_SCALING,
  max_position_embeddings: 131072,
  vocab_size: 128256,
  tie_word_embeddings: true,
  bos_token_id: 128000,
  eos_token_id: 128001,
  torch_dtype: "bfloat16",
};

/** Parameters of a config.json's model. */
function parameterCount(raw: Record<string, unknown>): number {
  return parameterSpecs(parseHfConfig(raw)).reduce((n, s) => n + shapeSize(s.shape), 0);
}

Deno.test("real shapes: parameter counts of the published configs", () => {
  assertEquals(parameterCount(LLAMA32_1B), 1_235_814_400);
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
