import { assertEquals } from "../_asserts.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { initParameters } from "../../src/model/init.ts";
import { createModel, type PolicyModel } from "../../src/model/policy.ts";
import {
  ENGINE_GRAPHS,
  ENGINE_KV_CACHE_SETS,
  GenerationEngine,
  type GenerationRequest,
} from "../../src/engine/engine.ts";
import { assertClose } from "../_assert_close.ts";
import { checkGreedyTokens } from "../_greedy_reference.ts";
import {
  tinyGemma2Config,
  tinyGemma3Config,
  tinyGemmaConfig,
  tinyGraniteConfig,
  tinyLlama32Config,
  tinyOlmo2Config,
  tinyPhi3Config,
  tinyPhi4MiniConfig,
  tinySmolLm3Config,
  tinyStableLmConfig,
} from "../_tiny_families.ts";

const CONFIGS: Record<string, Record<string, unknown>> = {
  llama: {
    model_type: "qwen2",
    hidden_size: 16,
    intermediate_size: 24,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    rms_norm_eps: 1e-6,
    rope_theta: 10000,
    vocab_size: 29,
    max_position_embeddings: 128,
    tie_word_embeddings: true,
    eos_token_id: 28,
  },
  gpt2: {
    model_type: "gpt2",
    n_embd: 16,
    n_layer: 2,
    n_head: 2,
    n_positions: 64,
    vocab_size: 29,
    layer_norm_epsilon: 1e-5,
    activation_function: "gelu_new",
    eos_token_id: 28,
  },
  "llama 3.2": { ...tinyLlama32Config(29), eos_token_id: 28 },
  // Soft-capped logits: random Gemma weights (embeddings scaled by sqrt(hidden), tied to the
  // head) otherwise put almost all mass on one token, and the samples would not differ.
  "gemma 3 (window 4, logit softcap)": tinyGemma3Config(29, 3, {
    eos_token_id: 28,
    final_logit_softcapping: 3,
  }),
  "phi3 (window 3)": { ...tinyPhi3Config(29), eos_token_id: 28 },
  olmo2: { ...tinyOlmo2Config(29), eos_token_id: 28 },
  "gemma (1 + w norms, head_dim 12, GELU-tanh)": { ...tinyGemmaConfig(29), eos_token_id: 28 },
  "gemma 2 (alternating windows, score and final softcaps)": {
    ...tinyGemma2Config(29),
    eos_token_id: 28,
  },
  "smollm3 (NoPE every second layer)": { ...tinySmolLm3Config(29), eos_token_id: 28 },
  "granite (embedding, attention, residual and logit multipliers)": {
    ...tinyGraniteConfig(29),
    eos_token_id: 28,
  },
  "phi-4-mini (partial rotary 0.75, longrope)": { ...tinyPhi4MiniConfig(29), eos_token_id: 28 },
  "stablelm (LayerNorms, q/k/v biases, partial rotary 0.25)": {
    ...tinyStableLmConfig(29),
    eos_token_id: 28,
  },
};

const PROMPTS = [[3, 1, 4, 1, 5, 9, 2], [6, 5], [
  3,
  5,
  8,
  9,
  7,
  9,
  3,
  2,
  3,
  8,
  4,
  6,
  2,
  6,
  4,
  3,
  3,
]];

async function tinyModel(raw: Record<string, unknown>): Promise<PolicyModel> {
  return await createModel(raw, initParameters(parseHfConfig(raw), 11, 0.5));
}

for (const [family, raw] of Object.entries(CONFIGS)) {
  Deno.test(`${family}: greedy tokens are the argmax of the full-sequence forward (KV cache consistent)`, async () => {
    const model = await tinyModel(raw);
    const samples = await model.generate(PROMPTS, { temperature: 0, maxTokens: 12, stop: [] });
    for (const sample of samples) assertEquals(sample.tokens.length, 12);
    const checked = await checkGreedyTokens(model, PROMPTS, samples);
    assertEquals(checked > 30, true, `only ${checked} positions had a clear argmax`);
    model.destroy();
  });

  Deno.test(`${family}: sampled log-probs equal teacher-forced logprobs (n samples share a prefill)`, async () => {
    const model = await tinyModel(raw);
    const samples = await model.generate(PROMPTS, {
      n: 3,
      temperature: 0.8,
      maxTokens: 10,
      seed: 5,
    });
    assertEquals(samples.length, 9);
    assertEquals(samples.map((s) => s.prompt), [0, 0, 0, 1, 1, 1, 2, 2, 2]);
    const sequences = samples.map((s) => [...PROMPTS[s.prompt], ...s.tokens]);
    const forced = await model.logprobs(sequences, { temperature: 0.8 });
    samples.forEach((s, i) => {
      const p = PROMPTS[s.prompt].length;
      assertClose(s.logprobs, forced[i].slice(p - 1), {
        atol: 1e-4,
        rtol: 1e-4,
        label: `sample ${i}`,
      });
      if (s.finishReason === "stop") assertEquals(s.tokens.at(-1), 28);
      else assertEquals(s.tokens.length, 10);
    });
    // The three samples of a prompt are drawn independently.
    assertEquals(new Set(samples.slice(0, 3).map((s) => s.tokens.join())).size > 1, true);
    model.destroy();
  });

  Deno.test(`${family}: a ragged batch gives the same greedy tokens as one prompt at a time`, async () => {
    const model = await tinyModel(raw);
    const together = await model.generate(PROMPTS, { temperature: 0, maxTokens: 9, stop: [] });
    for (const [i, prompt] of PROMPTS.entries()) {
      const [alone] = await model.generate([prompt], { temperature: 0, maxTokens: 9, stop: [] });
      assertEquals(alone.tokens, together[i].tokens, `prompt ${i}`);
      assertClose(alone.logprobs, together[i].logprobs, { atol: 1e-5, label: `prompt ${i}` });
    }
    model.destroy();
  });
}

Deno.test("the same seed gives the same samples; a stop token ends a sample and is kept", async () => {
  const model = await tinyModel(CONFIGS.llama);
  const a = await model.generate(PROMPTS, {
    n: 2,
    temperature: 1,
    maxTokens: 12,
    seed: 42,
    stop: [],
  });
  const b = await model.generate(PROMPTS, {
    n: 2,
    temperature: 1,
    maxTokens: 12,
    seed: 42,
    stop: [],
  });
  assertEquals(a.map((s) => s.tokens), b.map((s) => s.tokens));
  const stopAt = a[0].tokens[4];
  const first = a[0].tokens.indexOf(stopAt);
  const [stopped] = await model.generate([PROMPTS[0]], {
    temperature: 1,
    maxTokens: 12,
    seed: 42,
    stop: [stopAt],
  });
  assertEquals(stopped.finishReason, "stop");
  assertEquals(stopped.tokens, a[0].tokens.slice(0, first + 1));
  model.destroy();
});

Deno.test("decoding reads back once per block of tokens, not once per token", async () => {
  const model = await tinyModel(CONFIGS.llama);
  await model.generate(PROMPTS, { temperature: 1, maxTokens: 40, seed: 1, stop: [] });
  const stats = model.generationStats!;
  assertEquals(stats.decodeSteps, 39);
  assertEquals(stats.readbacks, Math.ceil(40 / 16));
  assertEquals(stats.generatedTokens, 3 * 40);
  model.destroy();
});

Deno.test("requests of one batch give what each gives alone (own settings, stop ids, maxTokens)", async () => {
  const model = await tinyModel(CONFIGS.llama);
  const engine = new GenerationEngine(model);
  const greedy: GenerationRequest = { prompt: PROMPTS[0], temperature: 0, maxTokens: 5, stop: [] };
  const free: GenerationRequest = {
    prompt: PROMPTS[2],
    n: 3,
    temperature: 0.9,
    topK: 12,
    maxTokens: 11,
    seed: 7,
    stop: [],
  };
  // A stop id that ends the second sample early.
  const [[, unstopped]] = await engine.generateRequests([free]);
  const sampled = { ...free, stop: [unstopped.tokens[3]] };
  const [[greedyAlone]] = await engine.generateRequests([greedy]);
  const [sampledAlone] = await engine.generateRequests([sampled]);
  const [[greedyMixed], sampledMixed] = await engine.generateRequests([greedy, sampled]);

  assertEquals(greedyMixed.tokens, greedyAlone.tokens);
  assertEquals(greedyMixed.tokens.length, 5);
  assertClose(greedyMixed.logprobs, greedyAlone.logprobs, { atol: 1e-5, label: "greedy" });
  assertEquals(sampledMixed.map((s) => s.prompt), [1, 1, 1]);
  assertEquals(sampledMixed[1].finishReason, "stop");
  sampledAlone.forEach((alone, j) => {
    assertEquals(sampledMixed[j].tokens, alone.tokens, `sample ${j}`);
    assertEquals(sampledMixed[j].finishReason, alone.finishReason, `sample ${j}`);
    assertEquals(alone.finishReason === "stop" || alone.tokens.length === 11, true);
  });
  const forced = await model.logprobs(
    sampledMixed.map((s) => [...PROMPTS[2], ...s.tokens]),
    { temperature: 0.9 },
  );
  sampledMixed.forEach((s, j) =>
    assertClose(s.logprobs, forced[j].slice(PROMPTS[2].length - 1), {
      atol: 1e-4,
      rtol: 1e-4,
      label: `sample ${j}`,
    })
  );
  engine.destroy();
  model.destroy();
});

Deno.test("an invalid request names its index", async () => {
  const model = await tinyModel(CONFIGS.llama);
  const engine = new GenerationEngine(model);
  const error = await engine.generateRequests([{ prompt: [1] }, { prompt: [1], maxTokens: 200 }])
    .then(() => "", (err: Error) => err.message);
  assertEquals(
    error,
    "Cannot generate from request 1: prompt of 1 tokens + maxTokens 200 exceeds the model's 128 positions",
  );
  engine.destroy();
  model.destroy();
});

Deno.test("an engine holds the graphs and KV caches of its latest shapes only; a dropped shape comes back the same", async () => {
  const model = await tinyModel(CONFIGS.llama);
  const engine = new GenerationEngine(model);
  const options = { temperature: 0, maxTokens: 4, stop: [] };
  // Prompt lengths in 6 different padded buckets (so 6 prefill, decode and cache shapes).
  const lengths = [3, 20, 36, 52, 68, 84];
  const prompt = (length: number) => Array.from({ length }, (_, i) => (i * 7 + length) % 29);
  const run = async (lengths: number[]) => {
    const tokens = [];
    for (const length of lengths) {
      const [[sample]] = await engine.generateRequests([{ prompt: prompt(length), ...options }]);
      tokens.push(sample.tokens);
      assertEquals(engine.held.graphs <= ENGINE_GRAPHS, true, `graphs after length ${length}`);
      assertEquals(engine.held.kvCacheSets <= ENGINE_KV_CACHE_SETS, true, `caches, ${length}`);
    }
    return { tokens, poolBytes: model.gpu.pool.allocatedBytes };
  };
  const first = await run(lengths);
  // Back to the two shortest shapes: the long shapes' buffers are freed, not kept in the pool.
  const short = await run(lengths.slice(0, 2));
  assertEquals(short.poolBytes < first.poolBytes, true, `${short.poolBytes} vs ${first.poolBytes}`);
  const second = await run(lengths); // every shape was dropped and is built again
  assertEquals(second.tokens, first.tokens);
  assertEquals(engine.held, { graphs: ENGINE_GRAPHS, kvCacheSets: ENGINE_KV_CACHE_SETS });
  assertEquals(second.poolBytes, first.poolBytes);
  for (const [i, length] of lengths.entries()) {
    const fresh = new GenerationEngine(model);
    const [[alone]] = await fresh.generateRequests([{ prompt: prompt(length), ...options }]);
    assertEquals(alone.tokens, first.tokens[i], `length ${length}`);
    fresh.destroy();
  }
  engine.destroy();
  model.destroy();
});
