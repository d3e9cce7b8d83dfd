import { parseHfConfig, readHfConfig } from "../../src/model/hf_config.ts";
import { ropeInvFreq } from "../../src/ops/rope.ts";
import {
  GEMMA2_2B,
  GEMMA3_1B,
  GEMMA3_270M,
  GEMMA_2B,
  GRANITE_33_2B,
  OLMO2_1B,
  PHI35_MINI,
  PHI3_MINI_4K,
  PHI4_MINI,
  SMOLLM3_3B,
  STABLELM2_1_6B,
} from "./_published_configs.ts";
import { assertEquals, assertRejects, assertThrows } from "../_asserts.ts";

/** Keys as in SmolLM2-135M's config.json (model_type llama), trimmed. */
const SMOLLM = {
  architectures: ["LlamaForCausalLM"],
  model_type: "llama",
  hidden_size: 576,
  intermediate_size: 1536,
  num_hidden_layers: 30,
  num_attention_heads: 9,
  num_key_value_heads: 3,
  rms_norm_eps: 1e-5,
  rope_theta: 100000,
  rope_scaling: null,
  max_position_embeddings: 8192,
  vocab_size: 49152,
  tie_word_embeddings: true,
  hidden_act: "silu",
  bos_token_id: 0,
  eos_token_id: 0,
  pad_token_id: null,
  torch_dtype: "bfloat16",
};

/** Keys as in Qwen2.5-0.5B-Instruct's config.json, trimmed (no attention_bias key). */
const QWEN2 = {
  model_type: "qwen2",
  hidden_size: 896,
  intermediate_size: 4864,
  num_hidden_layers: 24,
  num_attention_heads: 14,
  num_key_value_heads: 2,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000,
  max_position_embeddings: 32768,
  vocab_size: 151936,
  tie_word_embeddings: true,
  bos_token_id: 151643,
  eos_token_id: 151645,
};

Deno.test("hf config: a SmolLM (llama) config reads into the Llama description", () => {
  const cfg = parseHfConfig(SMOLLM);
  const { names, layers, ...rest } = cfg;
  assertEquals(rest, {
    modelType: "llama",
    hiddenSize: 576,
    intermediateSize: 1536,
    numLayers: 30,
    numHeads: 9,
    numKvHeads: 3,
    headDim: 64,
    vocabSize: 49152,
    maxPositions: 8192,
    tieWordEmbeddings: true,
    bosTokenId: 0,
    eosTokenIds: [0],
    padTokenId: undefined,
    norm: { kind: "rms_norm", eps: 1e-5, weightOffset: 0 },
    bias: { qkv: false, attentionOut: false, mlp: false },
    activation: "silu",
    embeddingScale: 1,
    attentionScale: 1 / 8,
  });
  assertEquals(layers.length, 30);
  assertEquals(layers[29], {
    kind: "full_attention",
    rotary: {
      theta: 100000,
      scaling: { type: "default" },
      rotaryDim: 64,
      invFreq: ropeInvFreq(100000, 64),
      attentionFactor: 1,
    },
  });
  assertEquals(names.qkv, { q: "self_attn.q_proj", k: "self_attn.k_proj", v: "self_attn.v_proj" });
  assertEquals([names.preAttentionNorm, names.preMlpNorm, names.postMlpNorm, names.qNorm], [
    "input_layernorm",
    "post_attention_layernorm",
    undefined,
    undefined,
  ]);
});

Deno.test("hf config: qwen2 has q/k/v bias by default, qwen3 has q/k norm and its own head_dim", () => {
  const qwen2 = parseHfConfig(QWEN2);
  assertEquals([qwen2.bias, qwen2.names.qNorm], [
    { qkv: true, attentionOut: false, mlp: false },
    undefined,
  ]);
  assertEquals(qwen2.eosTokenIds, [151645]);
  const qwen3 = parseHfConfig({
    ...QWEN2,
    model_type: "qwen3",
    hidden_size: 1024,
    num_attention_heads: 16,
    num_key_value_heads: 8,
    head_dim: 128,
    attention_bias: false,
    eos_token_id: [151645, 151643],
  });
  assertEquals(
    [qwen3.bias.qkv, qwen3.names.qNorm, qwen3.headDim, qwen3.numKvHeads, qwen3.eosTokenIds],
    [false, "self_attn.q_norm", 128, 8, [151645, 151643]],
  );
  assertEquals(qwen3.attentionScale, 1 / Math.sqrt(128), "head_dim, not hidden / heads");
});

Deno.test("hf config: llama's attention_bias adds q, k, v and o_proj biases, as HF's LlamaAttention", () => {
  assertEquals(parseHfConfig({ ...SMOLLM, attention_bias: true }).bias, {
    qkv: true,
    attentionOut: true,
    mlp: false,
  });
});

Deno.test("hf config: a minimal mistral config takes transformers' defaults", () => {
  const config = parseHfConfig({
    model_type: "mistral",
    hidden_size: 64,
    intermediate_size: 160,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    vocab_size: 100,
  });
  assertEquals(
    [
      config.numKvHeads,
      config.headDim,
      config.norm.eps,
      config.layers[0].rotary?.theta,
      config.maxPositions,
      config.tieWordEmbeddings,
      config.eosTokenIds,
      config.bosTokenId,
    ],
    [4, 16, 1e-6, 10000, 131072, false, [], undefined],
  );
});

Deno.test("hf config: a config without model_type is read by its architectures' row", () => {
  const { model_type: _, ...noType } = SMOLLM;
  assertEquals(parseHfConfig(noType).modelType, "llama");
});

Deno.test("hf config: gpt2 reads its own key names into LayerNorm, Conv1D and learned positions", () => {
  const cfg = parseHfConfig({
    model_type: "gpt2",
    n_embd: 768,
    n_layer: 12,
    n_head: 12,
    n_positions: 1024,
    n_inner: null,
    vocab_size: 50257,
    layer_norm_epsilon: 1e-5,
    activation_function: "gelu_new",
    bos_token_id: 50256,
    eos_token_id: 50256,
  });
  const { names, layers } = cfg;
  assertEquals(
    [cfg.intermediateSize, cfg.numKvHeads, cfg.headDim, cfg.maxPositions, cfg.tieWordEmbeddings],
    [3072, 12, 64, 1024, true],
  );
  assertEquals([cfg.norm, cfg.bias, cfg.activation, cfg.attentionScale], [
    { kind: "layer_norm", eps: 1e-5, weightOffset: 0 },
    { qkv: true, attentionOut: true, mlp: true },
    "gelu",
    1 / 8,
  ]);
  assertEquals(layers[11], { kind: "full_attention" });
  assertEquals([names.qkv, names.mlpIn, names.positionEmbedding, names.conv1d], [
    { fused: "attn.c_attn" },
    { fc: "mlp.c_fc" },
    "transformer.wpe.weight",
    true,
  ]);
});

const BAD: [string, Record<string, unknown>, string][] = [
  [
    "an unsupported model_type",
    { ...SMOLLM, model_type: "falcon" },
    `key "model_type" is "falcon"; expected one of "llama", "mistral", "qwen2", "qwen3", "phi3", "olmo2", "smollm3", "granite", "stablelm", "gpt2", "gemma", "gemma2", "gemma3_text"`,
  ],
  [
    "no model_type",
    { hidden_size: 8 },
    `key "model_type" is missing; expected one of "llama", "mistral", "qwen2", "qwen3", "phi3", "olmo2", "smollm3", "granite", "stablelm", "gpt2", "gemma", "gemma2", "gemma3_text"`,
  ],
  [
    "a missing size",
    { ...SMOLLM, intermediate_size: undefined },
    `key "intermediate_size" is missing; expected a positive integer`,
  ],
  [
    "a size given as text",
    { ...SMOLLM, num_hidden_layers: "30" },
    `key "num_hidden_layers" is "30"; expected a positive integer`,
  ],
  [
    "KV heads that do not divide the heads",
    { ...SMOLLM, num_key_value_heads: 2 },
    `key "num_key_value_heads" is 2; expected a divisor of num_attention_heads (9)`,
  ],
  [
    "heads that do not divide the hidden size",
    { ...SMOLLM, hidden_size: 577 },
    `key "hidden_size" is 577; expected a multiple of num_attention_heads (9)`,
  ],
  [
    "a bad eos list",
    { ...SMOLLM, eos_token_id: [1, "2"] },
    `key "eos_token_id" is [1,"2"]; expected a token id or a list of token ids`,
  ],
  ["a text flag", { ...SMOLLM, tie_word_embeddings: "yes" }, `key "tie_word_embeddings" is "yes"`],
  ["rope_scaling as text", { ...SMOLLM, rope_scaling: "linear" }, `key "rope_scaling" is "linear"`],
  [
    "an unknown RoPE variant",
    { ...SMOLLM, rope_scaling: { rope_type: "ntk", factor: 2 } },
    `key "rope_scaling.rope_type" is "ntk"; expected one of "default", "linear", "dynamic", "llama3", "yarn", "longrope"`,
  ],
  [
    "longrope factors not one per rotated pair",
    { ...SMOLLM, rope_scaling: { type: "longrope", short_factor: [1, 2], long_factor: [1, 2] } },
    `key "rope_scaling.short_factor" is "2 factors"; expected 32 (one per rotated pair of head dims)`,
  ],
  [
    "a partial rotary factor leaving an odd count of dims",
    { ...SMOLLM, partial_rotary_factor: 0.3 },
    `key "partial_rotary_factor" is 0.3; expected a number in (0, 1] giving an even count >= 2 of head_dim 64`,
  ],
  [
    "StableLM's per-head q/k LayerNorms",
    { ...SMOLLM, model_type: "stablelm", qk_layernorm: true },
    `key "qk_layernorm" is true; expected false`,
  ],
  [
    "SmolLM3's no_rope_layers shorter than the layers",
    { ...SMOLLM, model_type: "smollm3", no_rope_layers: [1, 0] },
    `key "no_rope_layers" is [1,0]; expected 30 or more entries`,
  ],
  [
    "an activation rft does not compute",
    { ...SMOLLM, hidden_act: "relu" },
    `key "hidden_act" is "relu"; expected one of "silu", "swish", "gelu_new"`,
  ],
  ["gpt2 without n_layer", { model_type: "gpt2", n_embd: 8, n_head: 2 }, `key "n_layer"`],
];

for (const [what, json, message] of BAD) {
  Deno.test(`hf config: ${what} is an error naming the file and key`, () => {
    assertThrows(
      () => parseHfConfig(json, "/m/config.json"),
      Error,
      "Cannot read /m/config.json: ",
    );
    assertThrows(() => parseHfConfig(json, "/m/config.json"), Error, message);
  });
}

Deno.test("hf config: readHfConfig reads the directory's config.json and reports bad files", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rft-config-" });
  try {
    await assertRejects(() => readHfConfig(dir), Error, `Cannot read ${dir}/config.json`);
    await Deno.writeTextFile(`${dir}/config.json`, "{ not json");
    await assertRejects(() => readHfConfig(dir), Error, `Cannot read ${dir}/config.json: `);
    await Deno.writeTextFile(`${dir}/config.json`, JSON.stringify(QWEN2));
    assertEquals((await readHfConfig(dir)).modelType, "qwen2");
    await Deno.writeTextFile(`${dir}/config.json`, JSON.stringify({ ...QWEN2, vocab_size: 0 }));
    await assertRejects(
      () => readHfConfig(dir),
      Error,
      `Cannot read ${dir}/config.json: key "vocab_size" is 0`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("hf config: gemma-3-270m reads into Gemma 3's description", () => {
  const cfg = parseHfConfig(GEMMA3_270M);
  assertEquals(
    [cfg.numHeads, cfg.numKvHeads, cfg.headDim, cfg.vocabSize, cfg.tieWordEmbeddings],
    [4, 1, 256, 262144, true],
  );
  assertEquals([cfg.norm, cfg.activation, cfg.attentionScale, cfg.finalLogitSoftcap], [
    { kind: "rms_norm", eps: 1e-6, weightOffset: 1 },
    "gelu",
    1 / 16,
    undefined,
  ]);
  // sqrt(640) = 25.298... in bfloat16 (torch_dtype), as HF's embed_scale.to(weight.dtype).
  assertEquals(cfg.embeddingScale, 25.25);
  assertEquals([cfg.bosTokenId, cfg.eosTokenIds, cfg.padTokenId], [2, [1], 0]);
  assertEquals(
    [cfg.names.preAttentionNorm, cfg.names.postAttentionNorm, cfg.names.preMlpNorm],
    ["input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm"],
  );
  assertEquals([cfg.names.postMlpNorm, cfg.names.qNorm, cfg.names.kNorm], [
    "post_feedforward_layernorm",
    "self_attn.q_norm",
    "self_attn.k_norm",
  ]);
  const [sliding, full] = [cfg.layers[0], cfg.layers[5]];
  assertEquals([sliding.kind, sliding.window, sliding.rotary?.theta], [
    "sliding_attention",
    512,
    10000,
  ]);
  assertEquals([full.kind, full.window, full.rotary?.theta], ["full_attention", undefined, 1e6]);
  assertEquals(cfg.layers.filter((l) => l.kind === "full_attention").length, 3);
});

Deno.test("hf config: gemma 3 without layer_types takes sliding_window_pattern; f32 checkpoints scale in f32", () => {
  const cfg = parseHfConfig({ ...GEMMA3_1B, torch_dtype: "float32" });
  const kinds = cfg.layers.map((l) => l.kind === "full_attention" ? "F" : "s").join("");
  assertEquals(kinds, "sssssFsssssFsssssFsssssFss");
  assertEquals(cfg.embeddingScale, Math.fround(Math.sqrt(1152)));
  assertEquals(cfg.eosTokenIds, [1, 106]);
});

Deno.test("hf config: gemma 3's global layers take rope_scaling, the local ones their own base", () => {
  const linear = { rope_type: "linear", factor: 8 };
  const cfg = parseHfConfig({ ...GEMMA3_1B, rope_scaling: linear });
  assertEquals(cfg.layers[5].rotary?.scaling, { type: "linear", factor: 8 });
  assertEquals(cfg.layers[0].rotary?.scaling, { type: "default" });
  // transformers v5 spells both per kind in rope_parameters.
  const { rope_theta: _, rope_local_base_freq: __, rope_scaling: ___, ...rest } = GEMMA3_1B;
  const v5 = parseHfConfig({
    ...rest,
    rope_parameters: {
      full_attention: { rope_type: "linear", factor: 8, rope_theta: 1e6 },
      sliding_attention: { rope_type: "default", rope_theta: 10000 },
    },
  });
  assertEquals(v5.layers, cfg.layers);
});

Deno.test("hf config: Gemma 3 configs rft cannot run are one line naming the key", () => {
  const cases: [Record<string, unknown>, string][] = [
    [
      { model_type: "gemma3", text_config: GEMMA3_1B, vision_config: {} },
      `key "model_type" is "gemma3"; expected a text model (this is Gemma 3's vision-language`,
    ],
    [{ ...GEMMA3_1B, use_bidirectional_attention: true }, `key "use_bidirectional_attention"`],
    [
      { ...GEMMA3_270M, layer_types: ["sliding_attention"] },
      `key "layer_types" is ["sliding_attention"]; expected 18 entries`,
    ],
  ];
  for (const [json, message] of cases) {
    assertThrows(() => parseHfConfig(json, "/m/config.json"), Error, message);
  }
});

Deno.test("hf config: phi3 fuses qkv and gate_up and slides every layer's window", () => {
  const cfg = parseHfConfig(PHI3_MINI_4K);
  assertEquals([cfg.names.qkv, cfg.names.mlpIn, cfg.norm.eps], [
    { fused: "self_attn.qkv_proj" },
    { gateUp: "mlp.gate_up_proj" },
    1e-5,
  ]);
  assertEquals(cfg.layers.every((l) => l.window === 2047), true);
});

Deno.test("hf config: Phi-3.5-mini and Phi-4-mini: longrope's short factors within the original length, partial rotary", () => {
  // Phi-3.5: whole heads of 96; Phi-4-mini: 0.75 of heads of 128.
  for (const [raw, rotaryDim] of [[PHI35_MINI, 96], [PHI4_MINI, 96]] as const) {
    const cfg = parseHfConfig(raw);
    const rotary = cfg.layers[0].rotary!;
    assertEquals([rotary.rotaryDim, rotary.invFreq.length, cfg.maxPositions], [
      rotaryDim,
      rotaryDim / 2,
      4096,
    ]);
    // factor 131072 / 4096 = 32: sqrt(1 + ln 32 / ln 4096).
    assertEquals(rotary.attentionFactor, Math.sqrt(1 + Math.log(32) / Math.log(4096)));
    const base = ropeInvFreq(10000, rotaryDim);
    const short = (raw.rope_scaling as { short_factor: number[] }).short_factor;
    assertEquals(rotary.invFreq, Float32Array.from(base, (f, i) => f / short[i]));
  }
  assertEquals(parseHfConfig(PHI4_MINI).tieWordEmbeddings, true);
});

Deno.test("hf config: SmolLM3 leaves every fourth layer without RoPE and slides windows on those", () => {
  const cfg = parseHfConfig(SMOLLM3_3B);
  assertEquals(
    cfg.layers.slice(0, 8).map((l) => l.rotary !== undefined),
    [true, true, true, false, true, true, true, false],
  );
  assertEquals([cfg.layers[0].rotary!.theta, cfg.tieWordEmbeddings], [5000000, true]);
  assertEquals(cfg.layers.every((l) => l.window === undefined), true);
  const sliding = parseHfConfig({ ...SMOLLM3_3B, use_sliding_window: true, sliding_window: 64 });
  assertEquals(sliding.layers.slice(0, 4).map((l) => l.window), [
    undefined,
    undefined,
    undefined,
    64,
  ]);
  const listed = parseHfConfig({ ...SMOLLM3_3B, no_rope_layers: new Array(36).fill(1) });
  assertEquals(listed.layers.every((l) => l.rotary !== undefined), true);
});

Deno.test("hf config: Granite's multipliers scale embeddings, scores, residual branches and logits", () => {
  const cfg = parseHfConfig(GRANITE_33_2B);
  assertEquals(
    [cfg.embeddingScale, cfg.attentionScale, cfg.residualScale, cfg.logitScale],
    [12, 0.015625, 0.22, 1 / 8],
  );
  assertEquals([cfg.tieWordEmbeddings, cfg.numKvHeads, cfg.bias.mlp], [true, 8, false]);
});

Deno.test("hf config: StableLM 2 reads into LayerNorms with biases and a quarter of each head rotating", () => {
  const cfg = parseHfConfig(STABLELM2_1_6B);
  assertEquals(cfg.norm, { kind: "layer_norm", eps: 1e-5, weightOffset: 0 });
  assertEquals(cfg.bias, { qkv: true, attentionOut: false, mlp: false });
  assertEquals(cfg.layers[0].rotary!.rotaryDim, 16);
});

Deno.test("hf config: gemma-2-2b: alternating windows, one RoPE base, four norms, softcaps", () => {
  const cfg = parseHfConfig(GEMMA2_2B);
  assertEquals(cfg.attentionSoftcap, 50);
  assertEquals(cfg.layers.slice(0, 3).map((l) => [l.kind, l.window]), [
    ["sliding_attention", 4096],
    ["full_attention", undefined],
    ["sliding_attention", 4096],
  ]);
  assertEquals(cfg.layers[0].rotary, cfg.layers[1].rotary);
  assertEquals([cfg.finalLogitSoftcap, cfg.attentionScale, cfg.embeddingScale], [
    30,
    1 / 16,
    Math.fround(Math.sqrt(2304)),
  ]);
  assertEquals([cfg.names.qNorm, cfg.names.preMlpNorm, cfg.norm.weightOffset], [
    undefined,
    "pre_feedforward_layernorm",
    1,
  ]);
});

Deno.test("hf config: gemma-2b: 1 + w norms, bf16 sqrt(hidden) embedding scale, GELU-tanh whatever hidden_act says", () => {
  const cfg = parseHfConfig(GEMMA_2B);
  assertEquals([cfg.norm.weightOffset, cfg.embeddingScale, cfg.activation], [1, 45.25, "gelu"]);
  assertEquals([cfg.headDim, cfg.numKvHeads, cfg.tieWordEmbeddings], [256, 1, true]);
  assertEquals(cfg.attentionScale, 1 / 16);
  assertThrows(
    () => parseHfConfig({ ...GEMMA_2B, hidden_activation: "gelu" }),
    Error,
    'key "hidden_activation" is "gelu"; expected one of',
  );
});

Deno.test("hf config: llama's mlp_bias adds MLP biases; qwen2 has no such key", () => {
  assertEquals(parseHfConfig({ ...SMOLLM, mlp_bias: true }).bias.mlp, true);
  assertEquals(parseHfConfig({ ...QWEN2, mlp_bias: true }).bias.mlp, false);
});

Deno.test("hf config: olmo2 has norms after each block only and q/k norms over projections", () => {
  const cfg = parseHfConfig(OLMO2_1B);
  assertEquals(
    [cfg.names.preAttentionNorm, cfg.names.postAttentionNorm, cfg.names.preMlpNorm],
    [undefined, "post_attention_layernorm", undefined],
  );
  assertEquals([cfg.names.postMlpNorm, cfg.qkNormScope], [
    "post_feedforward_layernorm",
    "projection",
  ]);
});

Deno.test("hf config: mistral's and qwen's sliding windows as transformers reads them", () => {
  const mistral = { ...QWEN2, model_type: "mistral", num_hidden_layers: 4 };
  const windows = (raw: Record<string, unknown>) => parseHfConfig(raw).layers.map((l) => l.window);
  // MistralConfig's default sliding_window is 4096; null turns it off.
  assertEquals(windows(mistral), [4096, 4096, 4096, 4096]);
  assertEquals(windows({ ...mistral, sliding_window: null }), [
    undefined,
    undefined,
    undefined,
    undefined,
  ]);
  const qwen = { ...QWEN2, num_hidden_layers: 4, sliding_window: 64, max_window_layers: 2 };
  assertEquals(windows(qwen), [undefined, undefined, undefined, undefined], "off by default");
  assertEquals(windows({ ...qwen, use_sliding_window: true }), [undefined, undefined, 64, 64]);
  const listed = ["sliding_attention", "full_attention", "sliding_attention", "full_attention"];
  assertEquals(windows({ ...qwen, use_sliding_window: true, layer_types: listed }), [
    64,
    undefined,
    64,
    undefined,
  ]);
});
