import { assertEquals } from "../_asserts.ts";
import { newEid } from "../../src/buffer/experience.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { initParameters } from "../../src/model/init.ts";
import { createModel } from "../../src/model/policy.ts";
import { chunkTokens, LOGITS_CHUNK_BYTES } from "../../src/model/token_scores.ts";
import { configure } from "../../src/util/registry.ts";
import { POLICY_LOSS_FN } from "../../src/algorithm/policy_loss/mod.ts";
import { TrainStep } from "../../src/trainer/train_step.ts";
import { TINY_QWEN2 } from "./_tiny_qwen2.ts";

Deno.test("a step over several logits chunks holds one gradient of the head, not one per chunk", async () => {
  // Qwen's vocabulary on a tiny body: the tied head is nearly every parameter, and 2 x 64 tokens
  // are three chunks of logits.
  const raw = { ...TINY_QWEN2, hidden_size: 64, vocab_size: 151936 };
  const model = await createModel(raw, initParameters(parseHfConfig(raw), 3, 0.02));
  const rows = 2, len = 64;
  assertEquals(Math.ceil((rows * len) / chunkTokens(raw.vocab_size)), 3);
  const experiences = Array.from({ length: rows }, (_, r) => ({
    tokens: Array.from({ length: len }, (_, t) => (r * 7919 + t * 104729) % raw.vocab_size),
    promptLength: 4,
    actionMask: Array.from({ length: len }, (_, t) => (t >= 4 ? 1 : 0)),
    logprobs: Array.from({ length: len }, (_, t) => (t >= 4 ? -12 : 0)),
    reward: r,
    advantages: Array.from({ length: len }, (_, t) => (t >= 4 ? 2 * r - 1 : 0)),
    info: { taskId: "t0", runId: r, policyVersion: 0, eid: newEid("t0", r) },
  }));
  const gpu = await getGpu();
  const parameterBytes = [...model.params.values()].reduce((n, v) => n + v.buffer.size, 0);
  const before = gpu.memory.held.total;
  const trainer = new TrainStep(model, {
    policyLoss: configure(POLICY_LOSS_FN, "ppo"),
    optimizer: { lr: 1e-3 },
  });
  const metrics = await trainer.step(experiences);
  // Two moments, the gradient and at most one texture copy of the weights (CPU adapters), plus a
  // few chunks' logits and their gradients (measured: 4.7 chunks); a gradient of the head per
  // chunk, held until their sum, adds 4.6 x the parameters more (the fused graph: 493 MB here
  // against 315 MB).
  const added = gpu.memory.peak - before;
  assertEquals(
    added < 4 * parameterBytes + 6 * LOGITS_CHUNK_BYTES,
    true,
    `the step added ${added} bytes at its peak for ${parameterBytes} bytes of parameters`,
  );
  assertEquals(Number.isFinite(metrics.loss) && metrics.grad_norm > 0, true);
  trainer.destroy();
  model.destroy();
});
