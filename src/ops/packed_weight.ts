/**
 * Packed weights: the B operand of a matmul (a weight) rearranged into an rgba32float texture so
 * that the 8 invocations of a texture matmul workgroup load neighbouring texels at every step
 * (layout in `shaders/pack_weight.wgsl`). On llvmpipe a load of 8 neighbouring texels costs about
 * half of 8 texels K values apart (the linear layout), which bounds a batch-1 decode. A constant
 * weight's texture is shared like an operand texture and packed only when the graph's variables
 * may have changed (the pack launches are variable copies). A half-precision weight is packed
 * widened to f32, per run into a texture of the op's own (so no f32 copy of it is kept).
 * Shader: shaders/pack_weight.wgsl
 * Reference: src/reference/packed_weight.ts
 * Test: tests/ops/packed_weight_test.ts
 */

import type { GpuContext } from "../gpu/device.ts";
import { packParams } from "../gpu/kernel_params.ts";
import type { KernelLaunch } from "../graph/op.ts";
import { weightFormatCode } from "./weight_format.ts";
import {
  operandTexture,
  type TextureLaunchContext,
  textureMisfit,
  textureWidth,
} from "./operand_texture.ts";

/** Output columns per packed block: 4 strips, whose texels of one step of K are side by side. */
export const PACKED_BLOCK_COLUMNS = 128;

/**
 * Output columns per packed strip: 8 invocations of 4 columns each (one column quad each). A
 * kernel's workgroup takes 1 to 4 strips, from any block.
 */
export const PACKED_STRIP_COLUMNS = 32;

/**
 * The matrix a packed texture holds: op(B) [k, n], stored [n, k] when `transB`, its elements f32
 * or (`format`) half precision two per word.
 */
export interface PackedShape {
  n: number;
  k: number;
  transB: boolean;
  format?: "bf16" | "f16";
}

/** Bytes of `count` stored elements of `shape`'s B (whole words). */
function storedBytes(shape: PackedShape, count: number): number {
  return shape.format ? Math.ceil(count / 2) * 4 : count * 4;
}

/** Texels of the packed texture of `shape`: whole blocks of columns by ceil(K / 4). */
export function packedTexels({ n, k }: PackedShape): number {
  return Math.ceil(n / PACKED_BLOCK_COLUMNS) * PACKED_BLOCK_COLUMNS * Math.ceil(k / 4);
}

/**
 * Why `shape` cannot be packed on `gpu`, or undefined: the texture must fit, and a B stored
 * [k, n] must fit one storage binding (one stored [n, k] is packed a range of blocks at a time).
 */
export function packedMisfit(gpu: GpuContext, shape: PackedShape): string | undefined {
  const misfit = textureMisfit(gpu, 4 * packedTexels(shape), "packed b");
  if (misfit) return misfit;
  const limits = gpu.device.limits;
  const bytes = storedBytes(
    shape,
    shape.transB ? PACKED_BLOCK_COLUMNS * shape.k : shape.n * shape.k,
  );
  if (bytes > limits.maxStorageBufferBindingSize) {
    return `expected ${shape.transB ? "128 rows of b" : "b"} to fit one storage binding of ` +
      `${limits.maxStorageBufferBindingSize} bytes to pack, received ${bytes} bytes`;
  }
  if (2 * Math.ceil(shape.k / 4) > limits.maxComputeWorkgroupsPerDimension) {
    return `expected K <= ${
      2 * limits.maxComputeWorkgroupsPerDimension
    } to pack b, received ${shape.k}`;
  }
  return undefined;
}

/**
 * The launches packing `buffer` (op(B) of `shape`) into `texture`, each binding a range of
 * whole blocks no larger than `maxBindingBytes` (default: the device's storage binding limit).
 * `variableCopy`: `buffer` is a constant variable's, so runs skip them while it is unchanged.
 */
export function packWeightLaunches(
  gpu: GpuContext,
  buffer: GPUBuffer,
  texture: GPUTexture,
  shape: PackedShape,
  variableCopy: boolean,
  maxBindingBytes = gpu.device.limits.maxStorageBufferBindingSize,
): KernelLaunch[] {
  const { n, k, transB, format } = shape;
  const blocks = Math.ceil(n / PACKED_BLOCK_COLUMNS);
  // A block's bytes stay whole words (and 256-aligned) for half formats too: 128 * k * 2.
  const blockBytes = PACKED_BLOCK_COLUMNS * k * (format ? 2 : 4);
  const perLaunch = transB ? Math.max(1, Math.floor(maxBindingBytes / blockBytes)) : blocks;
  const view = texture.createView();
  const launches: KernelLaunch[] = [];
  for (let first = 0; first < blocks; first += perLaunch) {
    const count = Math.min(perLaunch, blocks - first);
    const columns = Math.min(n, (first + count) * PACKED_BLOCK_COLUMNS) -
      first * PACKED_BLOCK_COLUMNS;
    const range = transB
      ? { buffer, offset: first * blockBytes, size: storedBytes(shape, columns * k) }
      : { buffer, size: storedBytes(shape, n * k) };
    launches.push({
      spec: {
        shader: "pack_weight",
        entryPoint: "main",
        constants: {
          TEX_W: textureWidth(gpu),
          TRANS_B: Number(transB),
          ...(format ? { B_FORMAT: weightFormatCode(format) } : {}),
        },
        bindings: ["read", "storage_texture"],
        params: true,
      },
      buffers: [range, view],
      params: packParams({ n, k, first_block: first }),
      workgroups: [2 * Math.ceil(k / 4), count, 1],
      variableCopy,
    });
  }
  return launches;
}

/**
 * The packed texture of `buffer` (op(B) of `shape`) and the launches filling it. A `constant`
 * buffer (a variable the graph never writes) gets the texture every launch packing it shares,
 * and no launches where another launch of the graph already packs it.
 */
export function packedWeightTexture(
  ctx: TextureLaunchContext,
  buffer: GPUBuffer,
  shape: PackedShape,
  label: string,
  constant: boolean,
): { view: GPUTextureView; launches: KernelLaunch[] } {
  const { texture, copied } = operandTexture(
    ctx,
    buffer,
    packedTexels(shape),
    GPUTextureUsage.STORAGE_BINDING,
    label,
    constant ? "variable" : "op",
    `packed ${shape.n}x${shape.k}${shape.transB ? " B^T" : ""}${shape.format ?? ""}`,
  );
  return {
    view: texture.createView(),
    launches: copied ? [] : packWeightLaunches(ctx.gpu, buffer, texture, shape, constant),
  };
}
