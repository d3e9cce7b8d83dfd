/**
 * Drives the texture-operand matmul prototype (`shaders/matmul_texture.wgsl`) outside the graph
 * runtime, which cannot bind textures yet: copies A and B from storage buffers into rgba32float
 * textures (copyBufferToTexture) and dispatches the kernel. Aligned square-ish shapes only; the
 * copies are part of every timed repetition.
 */

import type { GpuContext } from "../src/gpu/device.ts";
import { shaderSource } from "../src/gpu/shader_source.ts";

/** Texels per texture row; the shader's TEX_W default. */
const TEX_W = 4096;
const BYTES_PER_TEXEL = 16;
const BLOCK_ROWS = 32;
const BLOCK_COLS = 16;
const WG_X = 8;

/** Whether the prototype handles A [m, k] @ B [k, n]. */
export function textureMatmulFits(m: number, n: number, k: number): boolean {
  return m % BLOCK_ROWS === 0 && n % (BLOCK_COLS * WG_X) === 0 && k % 4 === 0;
}

/** A texture holding `elements` floats of a buffer as linear rgba32float texels. */
function operandTexture(device: GPUDevice, elements: number, label: string) {
  const texels = elements / 4;
  const rows = Math.ceil(texels / TEX_W);
  const texture = device.createTexture({
    label,
    size: [TEX_W, rows],
    format: "rgba32float",
    usage: GPUTextureUsage.TEXTURE_BINDING | GPUTextureUsage.COPY_DST,
  });
  const fullRows = Math.floor(texels / TEX_W);
  const tail = texels - fullRows * TEX_W;
  const copy = (encoder: GPUCommandEncoder, buffer: GPUBuffer) => {
    const bytesPerRow = TEX_W * BYTES_PER_TEXEL;
    if (fullRows > 0) {
      encoder.copyBufferToTexture({ buffer, bytesPerRow }, { texture }, [TEX_W, fullRows]);
    }
    if (tail > 0) {
      encoder.copyBufferToTexture(
        { buffer, offset: fullRows * bytesPerRow, bytesPerRow },
        { texture, origin: [0, fullRows] },
        [tail, 1],
      );
    }
  };
  return { texture, copy };
}

/** C [m, n] = A [m, k] @ B [k, n] via textures; `encode` records one repetition. */
export async function textureMatmul(
  gpu: GpuContext,
  a: GPUBuffer,
  b: GPUBuffer,
  c: GPUBuffer,
  m: number,
  n: number,
  k: number,
): Promise<{ encode(encoder: GPUCommandEncoder): void; destroy(): void }> {
  if (!textureMatmulFits(m, n, k)) {
    throw new Error(
      `Cannot run the texture matmul prototype on ${m}x${k} @ ${k}x${n}: expected M % 32, ` +
        `N % ${BLOCK_COLS * WG_X} and K % 4 to be 0`,
    );
  }
  const { device } = gpu;
  const module = device.createShaderModule({
    label: "matmul_texture",
    code: shaderSource("matmul_texture"),
  });
  const layout = device.createBindGroupLayout({
    label: "matmul_texture",
    entries: [
      {
        binding: 0,
        visibility: GPUShaderStage.COMPUTE,
        texture: { sampleType: "unfilterable-float" },
      },
      {
        binding: 1,
        visibility: GPUShaderStage.COMPUTE,
        texture: { sampleType: "unfilterable-float" },
      },
      { binding: 2, visibility: GPUShaderStage.COMPUTE, buffer: { type: "storage" } },
      { binding: 3, visibility: GPUShaderStage.COMPUTE, buffer: { type: "uniform" } },
    ],
  });
  const pipeline = await device.createComputePipelineAsync({
    label: "matmul_texture",
    layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }),
    compute: { module, entryPoint: "main", constants: { WG_X, TEX_W } },
  });
  const ta = operandTexture(device, m * k, "matmul_texture:a");
  const tb = operandTexture(device, k * n, "matmul_texture:b");
  const params = device.createBuffer({
    size: 16,
    usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
  });
  device.queue.writeBuffer(params, 0, new Uint32Array([m, n, k, 0]));
  const bindGroup = device.createBindGroup({
    layout,
    entries: [
      { binding: 0, resource: ta.texture.createView() },
      { binding: 1, resource: tb.texture.createView() },
      { binding: 2, resource: { buffer: c } },
      { binding: 3, resource: { buffer: params } },
    ],
  });
  return {
    encode(encoder) {
      ta.copy(encoder, a);
      tb.copy(encoder, b);
      const pass = encoder.beginComputePass({ label: "matmul_texture" });
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bindGroup);
      pass.dispatchWorkgroups(n / (BLOCK_COLS * WG_X), m / BLOCK_ROWS);
      pass.end();
    },
    destroy() {
      ta.texture.destroy();
      tb.texture.destroy();
      params.destroy();
    },
  };
}
