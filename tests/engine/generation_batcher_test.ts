import { assertEquals } from "../_asserts.ts";
import { GenerationEngine, type GenerationRequest } from "../../src/engine/engine.ts";
import { GenerationBatcher } from "../../src/engine/generation_batcher.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { initParameters } from "../../src/model/init.ts";
import { createModel, type PolicyModel } from "../../src/model/policy.ts";

const CONFIG = {
  model_type: "qwen2",
  hidden_size: 16,
  intermediate_size: 24,
  num_hidden_layers: 1,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  vocab_size: 29,
  max_position_embeddings: 64,
  tie_word_embeddings: true,
  eos_token_id: 28,
};

async function tinyEngine(): Promise<{ model: PolicyModel; engine: GenerationEngine }> {
  const model = await createModel(CONFIG, initParameters(parseHfConfig(CONFIG), 5, 0.5));
  return { model, engine: new GenerationEngine(model) };
}

function request(n: number, seed: number): GenerationRequest {
  return { prompt: [3, 1, 4, 1 + seed], n, temperature: 1, maxTokens: 4, seed, stop: [] };
}

Deno.test("batches take queued requests in order up to the slot cap; a bigger one runs alone", async () => {
  const { model, engine } = await tinyEngine();
  let version = 0;
  const batcher = new GenerationBatcher(engine, {
    maxBatchSlots: 4,
    policyVersion: () => ++version,
  });
  const requests = [3, 2, 1, 6, 1].map((n, i) => request(n, i));
  const results = await Promise.all(requests.map((r) => batcher.submit(r)));
  // Batches: [3] (3 + 2 > 4), [2, 1], [6] (over the cap, alone), [1].
  assertEquals(results.map((r) => r.policyVersion), [1, 2, 2, 3, 4]);
  assertEquals(batcher.stats, { batches: 4, requests: 5 });
  for (const [i, r] of requests.entries()) {
    const [alone] = await engine.generateRequests([r]);
    assertEquals(results[i].samples.map((s) => s.prompt), new Array(r.n).fill(0));
    assertEquals(results[i].samples.map((s) => s.tokens), alone.map((s) => s.tokens), `${i}`);
  }
  engine.destroy();
  model.destroy();
});

Deno.test("requests that arrive while a batch waits or runs share the next batch", async () => {
  const { model, engine } = await tinyEngine();
  const batcher = new GenerationBatcher(engine);
  const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
  // Someone else holds the GPU until `release`: the first batch is taken and waits for it.
  const { promise: held, resolve: release } = Promise.withResolvers<void>();
  const other = model.gpuLock.run(() => held);
  const first = batcher.submit(request(2, 0));
  await tick();
  const second = batcher.submit(request(1, 1));
  await tick();
  const third = batcher.submit(request(3, 2));
  await tick();
  release();
  await Promise.all([other, first, second, third]);
  assertEquals(batcher.stats, { batches: 2, requests: 3 });
  engine.destroy();
  model.destroy();
});

Deno.test("an invalid request is rejected alone; the others of its tick still run", async () => {
  const { model, engine } = await tinyEngine();
  const batcher = new GenerationBatcher(engine);
  const good = batcher.submit(request(1, 0));
  const bad = batcher.submit({ prompt: [] });
  const error = await bad.then(() => "", (err: Error) => err.message);
  assertEquals(error, "Cannot generate from request 0: the prompt is empty");
  assertEquals((await good).samples.length, 1);
  assertEquals(batcher.stats, { batches: 1, requests: 1 });
  engine.destroy();
  model.destroy();
});

Deno.test("constrained requests are batched apart from the others, each kind in order", async () => {
  const { model, engine } = await tinyEngine();
  let version = 0;
  const batcher = new GenerationBatcher(engine, { policyVersion: () => ++version });
  // A constraint that allows every token: its batch reads back after every step.
  const allowAll = () => ({ allowed: () => new Uint32Array(1).fill(0xffffffff), accept: () => {} });
  const requests = [request(1, 0), { ...request(1, 1), constraint: allowAll }, request(2, 2)];
  const results = await Promise.all(requests.map((r) => batcher.submit(r)));
  // Batches: the plain ones [0, 2] first (the oldest request is plain), then [1].
  assertEquals(results.map((r) => r.policyVersion), [1, 2, 1]);
  assertEquals(batcher.stats, { batches: 2, requests: 3 });
  for (const [i, r] of requests.entries()) {
    const [alone] = await engine.generateRequests([r]);
    assertEquals(results[i].samples.map((s) => s.tokens), alone.map((s) => s.tokens), `${i}`);
  }
  engine.destroy();
  model.destroy();
});
