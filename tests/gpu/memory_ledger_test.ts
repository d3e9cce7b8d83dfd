/**
 * The device's memory ledger: buffers and textures count from creation to destroy, textures by
 * their format's texel size, the peak stays; the memory report names the parts it owns (a
 * model's weights, the pool's buffers) and the rest adds up to what the ledger holds.
 */

import { assertEquals } from "../_asserts.ts";
import { createGpu } from "../../src/gpu/device.ts";
import { textureDescriptorBytes } from "../../src/gpu/memory_ledger.ts";
import { createModel } from "../../src/model/policy.ts";
import { initParameters } from "../../src/model/init.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { GradAccumulator } from "../../src/trainer/grad_accumulator.ts";
import { measureMemory } from "../../src/trainer/memory_report.ts";
import { tinyLlamaConfig } from "../_tiny_llama.ts";

Deno.test("memory ledger: live bytes of buffers and textures, and the peak", async () => {
  const gpu = await createGpu();
  try {
    const before = gpu.memory.held;
    const buffer = gpu.device.createBuffer({ size: 4096, usage: GPUBufferUsage.STORAGE });
    const descriptor = {
      size: [8, 3],
      format: "rgba16float" as const,
      usage: GPUTextureUsage.STORAGE_BINDING,
    };
    const texture = gpu.device.createTexture(descriptor);
    assertEquals(textureDescriptorBytes(descriptor), 8 * 3 * 8);
    const held = gpu.memory.held;
    assertEquals(held.buffers - before.buffers, 4096);
    assertEquals(held.textures - before.textures, 192);
    buffer.destroy();
    texture.destroy();
    assertEquals(gpu.memory.held, before);
    assertEquals(gpu.memory.peak >= before.total + 4096 + 192, true);
  } finally {
    gpu.device.destroy();
  }
});

Deno.test("measureMemory names a model's weights, gradient sums and graph buffers; parts add up", async () => {
  const gpu = await createGpu();
  try {
    const raw = tinyLlamaConfig(11);
    const model = await createModel(raw, initParameters(parseHfConfig(raw), 1), { gpu });
    const slot = gpu.pool.acquire(1 << 20, "test:slot");
    const sums = new GradAccumulator(gpu, model.variables());
    const use = measureMemory(gpu, { models: { trainer: model, reference: model } });
    const parts = new Map(use.gpu);
    const weights = model.variables().reduce((n, v) => n + v.buffer.size, 0);
    assertEquals(parts.get("trainer weights"), weights);
    assertEquals(parts.has("reference weights"), false, "shared buffers are counted once");
    assertEquals(parts.get("gradient sums"), weights);
    assertEquals(parts.get("graph buffers"), gpu.pool.allocatedBytes - gpu.pool.freeBytes);
    assertEquals([...parts.values()].reduce((a, b) => a + b, 0), use.gpuTotal);
    gpu.pool.release(slot);
    sums.destroy();
    model.destroy();
  } finally {
    gpu.pool.trim();
    gpu.device.destroy();
  }
});
