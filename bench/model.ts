/**
 * `deno run -A bench/model.ts`: throughput of a random-weight model with SmolLM2-135M's shape
 * (config only, nothing downloaded) on whatever adapter is present: prefill tokens/s, decode
 * tokens/s at batch 1 and 32 (KV cache, one readback per block), and training tokens/s
 * (forward + backward of the token log-probs, no optimizer). Graph compilation and autotuning
 * are warmed up before timing. `--model tiny` runs a small config for a quick look.
 */

import { parseArgs } from "node:util";
import { getGpu } from "../src/gpu/device.ts";
import { grad } from "../src/graph/autodiff.ts";
import { compileGraph } from "../src/graph/executable.ts";
import { Graph } from "../src/graph/graph.ts";
import { parameterSpecs } from "../src/model/parameters.ts";
import { parseHfConfig } from "../src/model/hf_config.ts";
import { initParameters } from "../src/model/init.ts";
import { createModel, type PolicyModel } from "../src/model/policy.ts";
import { buildLogits } from "../src/model/transformer.ts";
import { tokenLogprobs } from "../src/ops/token_logprobs.ts";

/** SmolLM2-135M's config.json (the architecture fields). */
const SMOLLM2_135M = {
  model_type: "llama",
  hidden_size: 576,
  intermediate_size: 1536,
  num_hidden_layers: 30,
  num_attention_heads: 9,
  num_key_value_heads: 3,
  head_dim: 64,
  rms_norm_eps: 1e-5,
  rope_theta: 100000,
  vocab_size: 49152,
  max_position_embeddings: 8192,
  tie_word_embeddings: true,
  bos_token_id: 0,
  eos_token_id: 0,
};

const TINY = {
  ...SMOLLM2_135M,
  hidden_size: 128,
  intermediate_size: 256,
  num_hidden_layers: 4,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 32,
  vocab_size: 512,
};

const { values } = parseArgs({
  options: {
    model: { type: "string", default: "smollm2-135m" },
    "prompt-len": { type: "string", default: "64" },
    "decode-tokens": { type: "string", default: "16" },
    "train-len": { type: "string", default: "64" },
    json: { type: "string" },
  },
});
const raw = values.model === "tiny" ? TINY : SMOLLM2_135M;
const promptLen = Number(values["prompt-len"]);
const decodeTokens = Number(values["decode-tokens"]);
const trainLen = Number(values["train-len"]);

const gpu = await getGpu();
const cfg = parseHfConfig(raw);
const paramCount = parameterSpecs(cfg).reduce((s, p) => s + p.shape.reduce((a, b) => a * b, 1), 0);
console.log(
  `model ${values.model}: ${
    (paramCount / 1e6).toFixed(1)
  }M parameters on ${gpu.summary.description}${
    gpu.summary.isFallback ? " (CPU fallback adapter)" : ""
  }`,
);
const model = await createModel(raw, initParameters(cfg, 1));
const prompt = (b: number) =>
  Array.from({ length: promptLen }, (_, t) => (7 * t + 13 * b + 1) % cfg.vocabSize);

async function seconds(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return (performance.now() - start) / 1000;
}

/** Prefill and decode rates for `batch` prompts, warm (graphs compiled by a first call). */
async function generation(m: PolicyModel, batch: number) {
  const prompts = Array.from({ length: batch }, (_, b) => prompt(b));
  const opts = { temperature: 1, seed: 1, stop: [] };
  // Warm-up: compile both cache shapes (maxTokens picks the cache length bucket).
  await m.generate(prompts, { ...opts, maxTokens: 1 });
  await m.generate(prompts, { ...opts, maxTokens: decodeTokens + 1 });
  const prefill = await seconds(() => m.generate(prompts, { ...opts, maxTokens: 1 }));
  const before = { ...m.generationStats! };
  const total = await seconds(() => m.generate(prompts, { ...opts, maxTokens: decodeTokens + 1 }));
  const after = m.generationStats!;
  return {
    prefillTokensPerS: (batch * promptLen) / prefill,
    decodeTokensPerS: (batch * decodeTokens) / Math.max(1e-9, total - prefill),
    readbacksPerToken: (after.readbacks - before.readbacks) / (batch * (decodeTokens + 1)),
  };
}

async function training(m: PolicyModel) {
  const g = new Graph();
  const input = (name: string) => g.input([1, trainLen], "i32", name);
  const inputs = { ids: input("ids"), positions: input("positions"), segments: input("segments") };
  const targets = input("targets");
  const lp = tokenLogprobs(buildLogits(cfg, m.weights(g), inputs), targets);
  const grads = grad(lp, parameterSpecs(cfg).map((s) => g.variable(m.params.get(s.name)!)));
  const exe = await compileGraph(gpu, [lp, ...grads], "train");
  const ids = Int32Array.from(prompt(0).concat(prompt(1)).slice(0, trainLen));
  const feeds = new Map([
    [inputs.ids, ids],
    [inputs.positions, Int32Array.from({ length: trainLen }, (_, t) => t)],
    [inputs.segments, new Int32Array(trainLen)],
    [targets, Int32Array.from(ids, (_, t) => ids[(t + 1) % trainLen])],
  ]);
  await exe.run(feeds);
  await exe.read([lp]); // warm-up
  const reps = 2;
  const s = await seconds(async () => {
    for (let i = 0; i < reps; i++) await exe.run(feeds);
    await exe.read([lp]);
  });
  exe.destroy();
  return { trainTokensPerS: (reps * trainLen) / s, dispatches: exe.stats.dispatches };
}

const one = await generation(model, 1);
const many = await generation(model, 32);
const train = await training(model);
const rows = [
  ["prefill tokens/s (batch 1, " + promptLen + " tokens)", one.prefillTokensPerS],
  ["prefill tokens/s (batch 32)", many.prefillTokensPerS],
  ["decode tokens/s (batch 1)", one.decodeTokensPerS],
  ["decode tokens/s (batch 32)", many.decodeTokensPerS],
  ["readbacks per generated token (batch 1)", one.readbacksPerToken],
  [
    "train tokens/s (fwd+bwd, " + trainLen + " tokens, " + train.dispatches + " dispatches)",
    train.trainTokensPerS,
  ],
] as const;
for (const [name, value] of rows) {
  console.log(`${name.padEnd(64)} ${value.toFixed(3).padStart(10)}`);
}
if (values.json) {
  await Deno.writeTextFile(
    values.json,
    JSON.stringify(
      { model: values.model, adapter: gpu.summary, ...Object.fromEntries(rows) },
      null,
      2,
    ),
  );
}
model.destroy();
