/**
 * Operand textures: a buffer's values copied into an rgba32float texture as linear texels, which
 * the texture kernels (matmul_texture, attention_texture) read instead of the buffer, bound as
 * read-only storage textures. On CPU adapters a texel load costs a fraction of a storage load
 * (llvmpipe runs those a lane at a time) and brings four values.
 * Shader: shaders/copy_to_texture.wgsl
 * Reference: src/reference/operand_texture.ts
 * Test: tests/ops/operand_texture_test.ts
 */

import type { GpuContext } from "../gpu/device.ts";
import { grid1d } from "../gpu/dispatch.ts";
import { packParams } from "../gpu/kernel_params.ts";
import type { KernelLaunch, LaunchContext } from "../graph/op.ts";

/** What filling an operand texture needs: the device, and textures that outlive the launch. */
export type TextureLaunchContext = Pick<
  LaunchContext,
  "gpu" | "texture" | "variableTexture" | "inputTexture"
>;

/** Bytes of one rgba32float texel: four elements. */
const BYTES_PER_TEXEL = 16;

/** `x` rounded up to a power of two. */
export const pow2 = (x: number) => 2 ** Math.ceil(Math.log2(Math.max(1, x)));

/** Texels per row of an operand texture: the largest power of two the device allows. */
export function textureWidth(gpu: GpuContext): number {
  return 2 ** Math.floor(Math.log2(gpu.device.limits.maxTextureDimension2D));
}

/**
 * Rows of an operand texture of `texels` texels, `width` per row: at least 3 and never a power of
 * two. llvmpipe compiles a shader variant (seconds) per combination of power-of-two-or-not sizes
 * of the bound textures, so every operand texture has a power-of-two width and a height that is
 * not one; padding the height to a power of two instead would waste up to half of a weight's
 * texture (Qwen2.5-0.5B's LM head: 4155 rows, not 8192).
 */
export function textureRows(texels: number, width: number): number {
  const rows = Math.max(3, Math.ceil(texels / width));
  return pow2(rows) === rows ? rows + 1 : rows;
}

/**
 * Who shares an operand texture: every launch copying the same constant variable (`variable`,
 * {@link LaunchContext.variableTexture}), the later ops of the graph copying the same input
 * tensor (`input`, {@link LaunchContext.inputTexture}), or no other op (`op`).
 */
export type TextureSharing = "variable" | "input" | "op";

/**
 * An rgba32float texture of at least `texels` texels for an operand copied from `buffer`: a
 * power of two wide (at most {@link textureWidth}), rows as {@link textureRows} says, shared as
 * `sharing` says among the launches that copy `buffer` into this shape and `layout` (a name of
 * how its texels hold the buffer); `copied` then says another launch of the graph already fills
 * it.
 */
export function operandTexture(
  ctx: TextureLaunchContext,
  buffer: GPUBuffer,
  texels: number,
  usage: GPUTextureUsageFlags,
  label: string,
  sharing: TextureSharing,
  layout: string,
): { texture: GPUTexture; copied: boolean } {
  const width = textureWidth(ctx.gpu);
  const descriptor: GPUTextureDescriptor = {
    size: [Math.min(width, pow2(texels)), textureRows(texels, width)],
    format: "rgba32float",
    usage,
  };
  if (sharing === "variable") return ctx.variableTexture(buffer, descriptor, label, layout);
  if (sharing === "input") return ctx.inputTexture(buffer, descriptor, label, layout);
  return { texture: ctx.texture(descriptor, label), copied: false };
}

/**
 * The most texels of an operand that is not a constant variable filled by a dispatch
 * (`shaders/copy_to_texture.wgsl`) rather than a copy command: 256 KB, a decode step's activations
 * at batch 32. A dispatch stays in the compute pass; a copy command ends it, costs lavapipe ~55 us
 * whatever its size and the encoder more; but the kernel loads its buffer a lane at a time on CPU
 * adapters, where a copy command is a memcpy.
 */
const DISPATCH_FILL_MAX_TEXELS = 16384;

/**
 * A texture holding the first `elements` values of `buffer` as linear rgba32float texels (texel
 * t at (t % width, t / width)), and what fills it; `elements` is a multiple of 4. Its width is a
 * power of two and its height is not ({@link textureRows}). A `constant` buffer (a variable the
 * graph never writes) gets the texture every launch copying it shares; a small operand that is
 * not constant, the texture of the later ops copying the same input tensor; `copied` then says
 * another launch of the graph already records the copy. `fill`, for a small operand that is not
 * constant: a launch that fills the texture, to run before the reader instead of `copy` (commands
 * outside the compute pass); absent where another launch fills it. With a `prologue` the texture
 * holds what it computes from `buffer` (never constant), shared by the later ops of the graph
 * with the same prologue of the same input, and always filled by its launch.
 */
export function linearTexture(
  ctx: TextureLaunchContext,
  buffer: GPUBuffer,
  elements: number,
  label: string,
  constant: boolean,
  prologue?: TexturePrologue,
): LinearTexture {
  if (!(buffer.usage & GPUBufferUsage.COPY_SRC)) {
    throw new Error(
      `Cannot copy buffer "${buffer.label}" into texture "${label}": expected COPY_SRC usage`,
    );
  }
  const width = textureWidth(ctx.gpu);
  const texels = elements / 4;
  const fullRows = Math.floor(texels / width);
  const tail = texels % width;
  const small = texels <= DISPATCH_FILL_MAX_TEXELS;
  const { texture, copied } = operandTexture(
    ctx,
    buffer,
    texels,
    GPUTextureUsage.STORAGE_BINDING | GPUTextureUsage.COPY_DST,
    label,
    prologue ? "input" : constant ? "variable" : small ? "input" : "op",
    prologue ? `linear ${prologue.layout}` : "linear",
  );
  // A multiple of 256 bytes (width is a power of two >= 8192), as buffer-texture copies require.
  const bytesPerRow = width * BYTES_PER_TEXEL;
  const view = texture.createView();
  const fill: KernelLaunch | undefined = prologue && !copied
    ? prologue.fill(view, width)
    : !constant && small && !copied
    ? {
      spec: {
        shader: "copy_to_texture",
        entryPoint: "main",
        constants: { TEX_W: width },
        bindings: ["read", "storage_texture"],
        params: true,
      },
      buffers: [buffer, view],
      params: packParams({ texels }),
      workgroups: grid1d(Math.ceil(texels / 64)),
    }
    : undefined;
  return {
    view,
    copied,
    fill,
    copy(encoder: GPUCommandEncoder) {
      if (fullRows > 0) {
        encoder.copyBufferToTexture({ buffer, bytesPerRow }, { texture }, [width, fullRows]);
      }
      if (tail > 0) {
        encoder.copyBufferToTexture(
          { buffer, offset: fullRows * bytesPerRow, bytesPerRow },
          { texture, origin: [0, fullRows] },
          [tail, 1],
        );
      }
    },
  };
}

/**
 * A function of an operand's buffer (and others) that fills its texture in place of the copy:
 * e.g. the RMSNorm of the activations a product reads (`prologue_matmul.ts`).
 */
export interface TexturePrologue {
  /** Names the function and its other inputs: the textures of equal names are shared. */
  layout: string;
  /** The launch writing the function's values into `view`, a texture `width` texels wide. */
  fill(view: GPUTextureView, width: number): KernelLaunch;
}

/** An operand texture of {@link linearTexture} and what fills it. */
export interface LinearTexture {
  view: GPUTextureView;
  /** Another launch of the graph already records the copy or the fill. */
  copied: boolean;
  /** The launch that fills a small operand that changes every run, in the compute pass. */
  fill?: KernelLaunch;
  /** The copy commands that fill it (outside a compute pass). */
  copy(encoder: GPUCommandEncoder): void;
}

/**
 * How `textures` of operands that change every run are filled before the launch that reads
 * them: the fill launches of the small ones, to go ahead of it, and the copy commands of the
 * others, as its `before` (absent when there are none); none for those an earlier launch fills.
 */
export function perRunFills(
  textures: readonly LinearTexture[],
): { launches: KernelLaunch[]; before?: (encoder: GPUCommandEncoder) => void } {
  const copied = textures.filter((t) => !t.fill && !t.copied);
  return {
    launches: textures.flatMap((t) => t.fill ? [t.fill] : []),
    ...(copied.length > 0
      ? { before: (encoder: GPUCommandEncoder) => copied.forEach((t) => t.copy(encoder)) }
      : {}),
  };
}

/**
 * Why `elements` values (operand `what`) do not fit one operand texture of `gpu`, padded as
 * {@link textureRows} says; undefined when they do.
 */
export function textureMisfit(gpu: GpuContext, elements: number, what: string): string | undefined {
  if (!gpu.readsStorageTextures) {
    return "expected WGSL to read storage textures (readonly_and_readwrite_storage_textures), " +
      "which this runtime lacks";
  }
  const width = textureWidth(gpu);
  const maxRows = gpu.device.limits.maxTextureDimension2D;
  if (textureRows(Math.ceil(elements / 4), width) <= maxRows) return undefined;
  return `expected ${what} to fit one rgba32float texture of ${width} x ${maxRows} texels ` +
    `(padded to a height that is not a power of two), received ${elements} values`;
}
