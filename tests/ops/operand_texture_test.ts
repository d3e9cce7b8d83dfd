// Operand textures: a small operand's fill kernel (copy_to_texture) and the copy commands give the
// CPU layout's image on odd sizes (texels not a multiple of the workgroup, one row and two); large
// or constant operands get no fill kernel.

import { assertEquals } from "../_asserts.ts";
import { TENSOR_USAGE } from "../../src/gpu/buffer_pool.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { encodeDispatches, prepareDispatch, releaseDispatch } from "../../src/gpu/dispatch.ts";
import { readBuffers } from "../../src/gpu/readback.ts";
import { linearTexture, textureWidth } from "../../src/ops/operand_texture.ts";
import { linearTextureRef } from "../../src/reference/operand_texture.ts";
import { uniformArray } from "../../src/util/random.ts";

/** Fills an operand texture with `values` (by its fill kernel or its copy) and reads its image. */
async function fillAndRead(values: Float32Array<ArrayBuffer>, by: "fill" | "copy") {
  const gpu = await getGpu();
  const { device } = gpu;
  const buffer = device.createBuffer({ size: values.byteLength, usage: TENSOR_USAGE });
  device.queue.writeBuffer(buffer, 0, values);
  const textures: GPUTexture[] = [];
  const makeTexture = (descriptor: GPUTextureDescriptor, label: string) => {
    textures.push(
      device.createTexture({
        ...descriptor,
        usage: descriptor.usage | GPUTextureUsage.COPY_SRC,
        label,
      }),
    );
    return textures[textures.length - 1];
  };
  const ctx = {
    gpu,
    texture: makeTexture,
    variableTexture(): never {
      throw new Error("no constant operands here");
    },
    inputTexture: (_: GPUBuffer, descriptor: GPUTextureDescriptor, label: string) => ({
      texture: makeTexture(descriptor, label),
      copied: false,
    }),
  };
  const operand = linearTexture(ctx, buffer, values.length, "operand", false);
  const [texture] = textures;
  const encoder = device.createCommandEncoder();
  const dispatches = [];
  if (by === "fill") {
    const l = operand.fill!;
    dispatches.push(await prepareDispatch(gpu, l.spec, l.buffers, l.params, l.workgroups));
    encodeDispatches(encoder, dispatches);
  } else {
    operand.copy(encoder);
  }
  const [w, h] = [texture.width, texture.height];
  const out = device.createBuffer({
    size: w * h * 16,
    usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC,
  });
  encoder.copyTextureToBuffer({ texture }, { buffer: out, bytesPerRow: w * 16 }, [w, h]);
  device.queue.submit([encoder.finish()]);
  const [raw] = await readBuffers(device, [{ buffer: out, bytes: w * h * 16 }]);
  dispatches.forEach(releaseDispatch);
  [buffer, out, texture].forEach((b) => b.destroy());
  return { image: new Float32Array(raw), width: w, rows: h };
}

Deno.test("copy_to_texture: a small operand's fill kernel and the copy commands give the CPU image", async () => {
  const width = textureWidth(await getGpu());
  // 37 texels (one partial workgroup, one short row); width + 811 texels (two rows, the second
  // partial): both under the fill kernel's limit.
  for (const texels of [37, width + 811]) {
    const values = uniformArray(4 * texels, texels);
    for (const by of ["fill", "copy"] as const) {
      const { image, width: w, rows } = await fillAndRead(values, by);
      assertEquals(
        Array.from(image),
        Array.from(linearTextureRef(values, w, rows)),
        `${texels} texels by ${by}`,
      );
    }
  }
});

Deno.test("copy_to_texture: large or constant operands are filled by copy commands", async () => {
  const gpu = await getGpu();
  const buffer = gpu.device.createBuffer({ size: 4 * 4 * 20000, usage: TENSOR_USAGE });
  const texture = (descriptor: GPUTextureDescriptor) => gpu.device.createTexture(descriptor);
  const fresh = (_: GPUBuffer, descriptor: GPUTextureDescriptor) => ({
    texture: texture(descriptor),
    copied: false,
  });
  const ctx = { gpu, texture, variableTexture: fresh, inputTexture: fresh };
  assertEquals(linearTexture(ctx, buffer, 4 * 16384, "small", false).fill !== undefined, true);
  assertEquals(linearTexture(ctx, buffer, 4 * 16385, "large", false).fill, undefined);
  assertEquals(linearTexture(ctx, buffer, 4 * 37, "constant", true).fill, undefined);
  buffer.destroy();
});
