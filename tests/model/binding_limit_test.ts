/**
 * Tensors against the device's storage-binding limit, on a device with WebGPU's default of
 * 128 MiB (the fallback adapter's own limit; GPUs allow more): a graph tensor above it is refused
 * with a clear error before any GPU work, as is a weight other than the token embedding or LM
 * head, which are sharded instead; logits that would exceed it are never whole: `logprobs` and
 * training run the batch in one graph, the logits in chunks of tokens.
 */

import { assertEquals, assertRejects } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { newEid, validateExperience } from "../../src/buffer/experience.ts";
import { createGpu, type GpuContext } from "../../src/gpu/device.ts";
import { compileGraph } from "../../src/graph/executable.ts";
import { Graph } from "../../src/graph/graph.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { initParameters } from "../../src/model/init.ts";
import { createModel } from "../../src/model/policy.ts";
import { scale } from "../../src/ops/unary.ts";
import { TrainStep } from "../../src/trainer/train_step.ts";
import { referenceLogits } from "../../src/model/transformer_reference.ts";
import { POLICY_LOSS_FN } from "../../src/algorithm/policy_loss/mod.ts";
import { configure } from "../../src/util/registry.ts";

/** A one-layer llama with a large vocabulary: its logits outgrow a binding after a few hundred tokens. */
const WIDE_VOCAB = {
  model_type: "llama",
  hidden_size: 8,
  intermediate_size: 16,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  vocab_size: 50000,
  max_position_embeddings: 512,
  tie_word_embeddings: true,
};

/** WebGPU's default storage-binding limit. */
const LIMIT = 128 * 1024 * 1024;

/** Runs `fn` on a new device whose storage bindings hold at most {@link LIMIT} bytes. */
async function withSmallBindings(fn: (gpu: GpuContext) => Promise<void>): Promise<void> {
  const gpu = await createGpu({ limits: { maxStorageBufferBindingSize: LIMIT } });
  try {
    assertEquals(gpu.device.limits.maxStorageBufferBindingSize, LIMIT);
    await fn(gpu);
  } finally {
    gpu.pool.trim();
    gpu.device.destroy();
  }
}

/** Token ids of a deterministic walk over the vocabulary. */
function sequence(length: number, start: number): number[] {
  return Array.from({ length }, (_, i) => (start + 7919 * i) % WIDE_VOCAB.vocab_size);
}

Deno.test("compileGraph names a tensor larger than one storage binding", async () => {
  await withSmallBindings(async (gpu) => {
    const g = new Graph();
    const x = g.input([2, LIMIT / 8 + 1], "f32", "big");
    await assertRejects(
      () => compileGraph(gpu, [scale(x, 2)], "too_big"),
      Error,
      `Cannot compile graph "too_big": tensor big[2,${LIMIT / 8 + 1}] (a input) needs`,
    );
  });
});

Deno.test("createModel refuses a weight larger than one binding that cannot be sharded", async () => {
  await withSmallBindings(async (gpu) => {
    const hidden = 64;
    const inner = LIMIT / 4 / hidden + 1;
    await assertRejects(
      () =>
        createModel({ ...WIDE_VOCAB, hidden_size: hidden, intermediate_size: inner }, new Map(), {
          gpu,
        }),
      Error,
      `Cannot create model: tensor "model.layers.0.mlp.gate_proj.weight" [${inner},${hidden}] ` +
        `needs ${inner * hidden * 4} bytes as f32, above this adapter's ` +
        `maxStorageBufferBindingSize of ${LIMIT}`,
    );
  });
});

Deno.test("an embedding larger than one binding is sharded; log-probs match the f64 reference", async () => {
  await withSmallBindings(async (gpu) => {
    const hidden = 64;
    const vocab = LIMIT / 4 / hidden + 1000; // 2 shards
    const raw = { ...WIDE_VOCAB, hidden_size: hidden, vocab_size: vocab };
    const cfg = parseHfConfig(raw);
    const params = initParameters(cfg, 6, 0.5);
    const model = await createModel(raw, params, { gpu });
    assertEquals(
      [...model.params.keys()].filter((n) => n.startsWith("model.embed_tokens.weight")),
      ["model.embed_tokens.weight#0", "model.embed_tokens.weight#1"],
    );
    const tokens = [5, vocab - 1, LIMIT / 4 / hidden - 1, 17, vocab - 900]; // ids in both shards
    const [logprobs] = await model.logprobs([tokens]);
    const weights = new Map([...params].map(([name, data]) => [name, Float64Array.from(data)]));
    const logits = referenceLogits(cfg, weights, tokens);
    const expected = tokens.slice(1).map((target, t) => {
      const row = logits.subarray(t * vocab, (t + 1) * vocab);
      let max = -Infinity;
      for (const x of row) max = Math.max(max, x);
      let sum = 0;
      for (const x of row) sum += Math.exp(x - max);
      return row[target] - max - Math.log(sum);
    });
    assertClose(logprobs, expected, { atol: 1e-4, rtol: 1e-4 });
    model.destroy();
  });
});

Deno.test("logprobs whose batch logits exceed one binding: one graph, chunked, same values", async () => {
  await withSmallBindings(async (gpu) => {
    const params = initParameters(parseHfConfig(WIDE_VOCAB), 3, 0.5);
    const model = await createModel(WIDE_VOCAB, params, { gpu });
    const sequences = [250, 251, 180, 200].map((n, i) => sequence(n, i * 11));
    // Padded to 256 positions, four rows of logits need more than one binding holds.
    assertEquals(4 * 256 * WIDE_VOCAB.vocab_size * 4 > LIMIT, true);
    const together = await model.logprobs(sequences);
    for (const [i, s] of sequences.entries()) {
      const [alone] = await model.logprobs([s]);
      assertEquals(together[i].length, s.length - 1);
      assertClose(together[i], alone, { atol: 1e-6, rtol: 1e-6, label: `sequence ${i}` });
    }
    // Random-weight log-probs over 50000 tokens are near -log(50000), not 0.
    assertClose([together[0][0]], [-Math.log(WIDE_VOCAB.vocab_size)], { atol: 0.5, rtol: 0 });
    model.destroy();
  });
});

Deno.test("a train batch whose logits exceed one binding trains in one graph, logits chunked", async () => {
  await withSmallBindings(async (gpu) => {
    const params = initParameters(parseHfConfig(WIDE_VOCAB), 4, 0.5);
    const model = await createModel(WIDE_VOCAB, params, { gpu });
    const prompt = 10;
    const experiences = [250, 240, 230].map((n, i) => {
      const tokens = sequence(n, 100 + i);
      return validateExperience({
        tokens,
        promptLength: prompt,
        actionMask: tokens.map((_, t) => (t >= prompt ? 1 : 0)),
        logprobs: tokens.map(() => 0),
        reward: 0,
        info: { taskId: `t${i}`, runId: 0, policyVersion: 0, eid: newEid(`t${i}`, 0) },
      }, "test");
    });
    // The SFT loss is the token-mean of -log p over the response tokens, before the update.
    const logprobs = await model.logprobs(experiences.map((e) => e.tokens));
    const response = logprobs.flatMap((lp) => lp.slice(prompt - 1));
    const expected = -response.reduce((a, b) => a + b, 0) / response.length;
    const step = new TrainStep(model, {
      policyLoss: configure(POLICY_LOSS_FN, "sft"),
      optimizer: { lr: 0.01, weightDecay: 0 },
      gradClip: 1,
    });
    // 3 rows x 256 positions of logits would not fit a binding; in chunks they need not.
    const metrics = await step.step(experiences, { lrStep: 0 });
    assertEquals(metrics.micro_batches, 1, JSON.stringify(metrics));
    assertClose([metrics.loss], [expected], { atol: 1e-5, rtol: 1e-5, label: "loss" });
    assertEquals(Number.isFinite(metrics.grad_norm) && metrics.grad_norm > 0, true);
    step.destroy();
    model.destroy();
  });
});
