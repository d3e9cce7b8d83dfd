/**
 * f32 variables narrowed into half-precision ones (bf16 or f16, two per 32-bit word) on the GPU,
 * no readback: the explorer's half copy of the trainer's weights, made once and refreshed at each
 * weight sync. Rounds to nearest even, as the host's packing does.
 * Shader: shaders/convert_to_half.wgsl
 * Reference: src/reference/convert.ts
 * Test: tests/model/half_copy_test.ts
 */

import type { GpuContext } from "../gpu/device.ts";
import { grid1d, type PreparedDispatch, prepareDispatch } from "../gpu/dispatch.ts";
import { packParams } from "../gpu/kernel_params.ts";
import { isHalf, sameShape, shapeSize, type Variable } from "../graph/tensor.ts";

const WG = 256;

/**
 * The launch writing `source` (f32) into `target` (the same shape, bf16 or f16), prepared once;
 * encode it into the command buffer of the copy (and release it after).
 */
export async function narrowingDispatch(
  gpu: GpuContext,
  source: Variable,
  target: Variable,
): Promise<PreparedDispatch> {
  if (source.dtype !== "f32" || !isHalf(target.dtype) || !sameShape(source.shape, target.shape)) {
    throw new Error(
      `Cannot narrow "${source.name}" (${source.dtype} [${source.shape}]) into "${target.name}" ` +
        `(${target.dtype} [${target.shape}]): expected an f32 source and a half target of one shape`,
    );
  }
  const n = shapeSize(source.shape);
  return await prepareDispatch(
    gpu,
    {
      shader: "convert_to_half",
      entryPoint: "main",
      constants: { FORMAT: target.dtype === "bf16" ? 1 : 2, WG },
      bindings: ["read", "read_write"],
      params: true,
    },
    [source.buffer, target.buffer],
    packParams({ n }),
    grid1d(Math.ceil(n / 2 / WG)),
  );
}
