/**
 * Shared plumbing of the row-wise ops over the last axis (reductions, softmax, token
 * log-probs): the input check and the launch of a one-workgroup-per-row kernel.
 */

import type { GpuContext } from "../gpu/device.ts";
import { grid1d } from "../gpu/dispatch.ts";
import { packParams, type ParamValue } from "../gpu/kernel_params.ts";
import type { KernelLaunch } from "../graph/op.ts";
import type { Tensor } from "../graph/tensor.ts";

/**
 * Throws unless `x` is an f32 tensor of rank >= 1, the input every last-axis op (`op` in the
 * message) takes.
 */
export function checkLastAxisInput(op: string, x: Tensor): void {
  if (x.dtype !== "f32" || x.rank === 0) {
    throw new Error(`Cannot apply "${op}" to ${x}: expected an f32 tensor of rank >= 1`);
  }
}

/**
 * Workgroup size for rows of `cols` columns: the next power of two, clamped to [32, 256], so
 * short rows do not idle 256 threads; 32 on CPU adapters, where each barrier of the tree
 * reductions switches between every group of SIMD lanes (llvmpipe: RMSNorm of [640, 576] 2.5x
 * faster with 32 than with 256).
 */
function rowWorkgroupSize(gpu: GpuContext, cols: number): number {
  if (gpu.summary.isFallback) return 32;
  return Math.min(256, Math.max(32, 2 ** Math.ceil(Math.log2(cols))));
}

/**
 * One launch of a row kernel (reduce, softmax, token_logprobs, sampler): one workgroup per row of
 * `x` read as [rows, cols], sized for `gpu`; every buffer is bound read-only except the last (the output);
 * params are `{rows, cols, ...extraParams}`. `constants` gets `WG` added.
 */
export function rowLaunch(
  gpu: GpuContext,
  shader: string,
  entryPoint: string,
  constants: Readonly<Record<string, number>>,
  x: Tensor,
  buffers: readonly GPUBuffer[],
  extraParams: Readonly<Record<string, ParamValue>> = {},
): KernelLaunch {
  const cols = x.lastDim;
  const rows = x.size / cols;
  return {
    spec: {
      shader,
      entryPoint,
      constants: { ...constants, WG: rowWorkgroupSize(gpu, cols) },
      bindings: [...buffers.slice(1).map(() => "read" as const), "read_write"],
      params: true,
    },
    buffers,
    params: packParams({ rows, cols, ...extraParams }),
    workgroups: grid1d(rows),
  };
}
