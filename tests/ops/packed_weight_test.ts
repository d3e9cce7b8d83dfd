// Packed weights: the pack kernel against the CPU layout on odd shapes (N spanning blocks and not
// a multiple of 128, K not a multiple of 4), B stored [N, K] packed in several launches of whole
// blocks and B stored [K, N] in one; the values are moved, not computed, so they must be equal.

import { assertEquals } from "../_asserts.ts";
import { TENSOR_USAGE } from "../../src/gpu/buffer_pool.ts";
import { createGpu, getGpu } from "../../src/gpu/device.ts";
import { encodeDispatches, prepareDispatch, releaseDispatch } from "../../src/gpu/dispatch.ts";
import { readBuffers } from "../../src/gpu/readback.ts";
import { pow2, textureRows, textureWidth } from "../../src/ops/operand_texture.ts";
import {
  packedMisfit,
  type PackedShape,
  packedTexels,
  packWeightLaunches,
} from "../../src/ops/packed_weight.ts";
import { packWeightRef } from "../../src/reference/packed_weight.ts";
import { uniformArray } from "../../src/util/random.ts";

/** Packs `values` (op(B) of `shape`) on the GPU and reads the texels back, in texel order. */
async function packOnGpu(values: Float32Array<ArrayBuffer>, shape: PackedShape, maxBytes?: number) {
  const gpu = await getGpu();
  const { device } = gpu;
  const buffer = device.createBuffer({ size: values.byteLength, usage: TENSOR_USAGE });
  device.queue.writeBuffer(buffer, 0, values);
  const width = textureWidth(gpu);
  const texels = packedTexels(shape);
  const [w, h] = [Math.min(width, pow2(texels)), textureRows(texels, width)];
  const texture = device.createTexture({
    size: [w, h],
    format: "rgba32float",
    usage: GPUTextureUsage.STORAGE_BINDING | GPUTextureUsage.COPY_SRC,
  });
  const launches = packWeightLaunches(gpu, buffer, texture, shape, true, maxBytes);
  const dispatches = [];
  for (const l of launches) {
    dispatches.push(await prepareDispatch(gpu, l.spec, l.buffers, l.params, l.workgroups, l));
  }
  const out = device.createBuffer({
    size: w * h * 16,
    usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC,
  });
  const encoder = device.createCommandEncoder();
  encodeDispatches(encoder, dispatches);
  encoder.copyTextureToBuffer({ texture }, { buffer: out, bytesPerRow: w * 16 }, [w, h]);
  device.queue.submit([encoder.finish()]);
  const [raw] = await readBuffers(device, [{ buffer: out, bytes: w * h * 16 }]);
  dispatches.forEach(releaseDispatch);
  [buffer, out].forEach((b) => b.destroy());
  texture.destroy();
  return { launches: launches.length, texels: new Float32Array(raw).subarray(0, 4 * texels) };
}

Deno.test("pack_weight: B^T [N, K] packed in launches of whole blocks matches the CPU layout", async () => {
  const shape = { n: 301, k: 53, transB: true }; // three blocks, the last one partial
  const values = uniformArray(shape.n * shape.k, 7);
  // One block of 128 rows per launch: three launches, each binding its own range of B^T.
  const { launches, texels } = await packOnGpu(values, shape, 128 * shape.k * 4);
  assertEquals(launches, 3);
  assertEquals(Array.from(texels), Array.from(packWeightRef(values, shape)));
});

Deno.test("pack_weight: B [K, N] matches the CPU layout", async () => {
  const shape = { n: 133, k: 22, transB: false };
  const values = uniformArray(shape.n * shape.k, 8);
  const { launches, texels } = await packOnGpu(values, shape);
  assertEquals(launches, 1);
  assertEquals(Array.from(texels), Array.from(packWeightRef(values, shape)));
});

Deno.test("pack_weight: the CPU layout puts a workgroup's 8 loads of a step side by side", () => {
  // Column 128 b + 32 v + 4 l + c (block b, strip v, invocation l, its column c) at k = 0..3 is
  // texel 128 b + 32 v + 8 c + l (K4 = 1): a strip's loads of one step are 8 neighbouring texels,
  // a block's 4 strips follow one another.
  const shape = { n: 256, k: 4, transB: true };
  const values = Float32Array.from({ length: 256 * 4 }, (_, i) => i);
  const packed = packWeightRef(values, shape);
  for (
    const [b, v, l, c] of [[0, 0, 0, 0], [0, 0, 1, 0], [0, 0, 7, 3], [0, 2, 3, 1], [1, 3, 5, 2]]
  ) {
    const column = 128 * b + 32 * v + 4 * l + c;
    const texel = 128 * b + 32 * v + 8 * c + l;
    assertEquals(
      Array.from(packed.subarray(4 * texel, 4 * texel + 4)),
      [0, 1, 2, 3].map((k) => column * 4 + k),
    );
  }
});

Deno.test("pack_weight: a B [K, N] past one storage binding is a misfit naming the limit", async () => {
  // On a device with WebGPU's default binding limit (a CPU adapter's own): a GPU's 2 GiB binding
  // outgrows the largest texture, so there the texture is what misfits first.
  const limit = 128 * 1024 * 1024;
  const gpu = await createGpu({ limits: { maxStorageBufferBindingSize: limit } });
  try {
    assertEquals(gpu.device.limits.maxStorageBufferBindingSize, limit);
    const n = Math.ceil(limit / 4 / 8) + 1;
    const why = packedMisfit(gpu, { n, k: 8, transB: false });
    if (!why?.includes(`storage binding of ${limit} bytes`)) {
      throw new Error(`expected a misfit naming the binding limit, received ${why}`);
    }
    assertEquals(packedMisfit(gpu, { n, k: 8, transB: true }), undefined);
  } finally {
    gpu.device.destroy();
  }
});
