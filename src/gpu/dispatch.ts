/**
 * Prepared kernel launches: a compiled pipeline with its bind group, params and workgroup
 * counts, made once and encoded many times. `encodeDispatches` records a list of them into one
 * command encoder, in one compute pass except around launches with commands to run before them
 * (e.g. buffer-to-texture copies, those of variables skippable while the variables are
 * unchanged); with `RFT_DEBUG=2` each gets its own timed pass.
 */

import type { GpuContext } from "./device.ts";
import { type PackedParams, paramsMismatch } from "./kernel_params.ts";
import type { BindingKind, KernelSpec } from "./kernel_spec.ts";
import { getKernel } from "./pipeline_cache.ts";

/** A storage binding: a whole buffer or a byte range of one. */
export type BufferArg = GPUBuffer | { buffer: GPUBuffer; offset?: number; size?: number };

/** What one binding of a launch gets: a buffer for a storage binding, a view for a texture. */
export type BindingArg = BufferArg | GPUTextureView;

/** Commands recorded into a command encoder outside any compute pass (e.g. copies). */
export type EncoderCommands = (encoder: GPUCommandEncoder) => void;

/** Commands a launch records before its dispatch, outside any compute pass. */
export interface LaunchCommands {
  /** Recorded before every encoding (e.g. copies of operands into textures). */
  before?: EncoderCommands;
  /**
   * Copies of variables' data into storage the launch owns (e.g. a weight's texture): recorded
   * before every encoding unless the encoder is told the copies hold the variables' latest
   * versions ({@link EncodeOptions.skipVariableCopies}).
   */
  copyVariables?: EncoderCommands;
  /**
   * The dispatch itself only refreshes a copy of variables' data (e.g. packs a weight into a
   * texture): skipped, as `copyVariables` are, while the variables are unchanged.
   */
  variableCopy?: boolean;
}

/** One kernel launch, ready to encode. */
export interface PreparedDispatch extends LaunchCommands {
  label: string;
  pipeline: GPUComputePipeline;
  bindGroup: GPUBindGroup;
  workgroups: readonly [number, number, number];
  /** The uniform buffer owned by this dispatch, if any (destroyed by {@link releaseDispatch}). */
  paramsBuffer?: GPUBuffer;
}

/** The most workgroups WebGPU allows per dimension by default. */
export const MAX_WORKGROUPS_PER_DIM = 65535;

/** Splits `groups` workgroups over x and y so neither exceeds the per-dimension limit. */
export function grid1d(groups: number): [number, number, number] {
  const n = Math.max(1, groups);
  if (n <= MAX_WORKGROUPS_PER_DIM) return [n, 1, 1];
  const y = Math.ceil(n / MAX_WORKGROUPS_PER_DIM);
  return [Math.ceil(n / y), y, 1];
}

/** The bind group resource of `arg`; throws when it does not fit the binding's kind. */
function bindingResource(
  what: string,
  binding: number,
  kind: BindingKind,
  arg: BindingArg,
  limits: GPUSupportedLimits,
): GPUBindingResource {
  const isView = arg instanceof GPUTextureView;
  const wantsView = kind === "texture" || kind === "storage_texture";
  if (isView !== wantsView) {
    throw new Error(
      `Cannot prepare kernel "${what}": binding ${binding} is ${
        kind === "texture"
          ? "a texture"
          : kind === "storage_texture"
          ? "a storage texture"
          : kind === "uniform"
          ? "a uniform buffer"
          : `a "${kind}" storage buffer`
      }, expected a ${wantsView ? "GPUTextureView" : "buffer"}, received a ${
        isView ? "GPUTextureView" : "buffer"
      }`,
    );
  }
  if (arg instanceof GPUTextureView) return arg;
  const range = "buffer" in arg ? arg : { buffer: arg };
  const bytes = range.size ?? range.buffer.size - (range.offset ?? 0);
  if (kind === "uniform") {
    if (bytes > limits.maxUniformBufferBindingSize) {
      throw new Error(
        `Cannot prepare kernel "${what}": uniform binding ${binding} spans ${bytes} bytes, above ` +
          `this adapter's maxUniformBufferBindingSize of ${limits.maxUniformBufferBindingSize}`,
      );
    }
    return range;
  }
  if (bytes > limits.maxStorageBufferBindingSize) {
    throw new Error(
      `Cannot prepare kernel "${what}": binding ${binding} spans ${bytes} bytes, above this ` +
        `adapter's maxStorageBufferBindingSize of ${limits.maxStorageBufferBindingSize}; rft ` +
        "does not split one tensor over several bindings yet: use shorter sequences or fewer " +
        "tokens per batch",
    );
  }
  return range;
}

/**
 * Compiles (or reuses) the kernel and builds its bind group and params buffer. `args` holds one
 * buffer or texture view per binding of `spec`; `params` must have the fields of the shader's
 * params struct, in its order and with its types; `commands` are recorded ahead of encodings.
 */
export async function prepareDispatch(
  gpu: GpuContext,
  spec: KernelSpec,
  args: readonly BindingArg[],
  params: PackedParams | undefined,
  workgroups: readonly [number, number, number],
  { before, copyVariables, variableCopy }: LaunchCommands = {},
): Promise<PreparedDispatch> {
  const what = `${spec.shader}.${spec.entryPoint}`;
  if (args.length !== spec.bindings.length) {
    throw new Error(
      `Cannot prepare kernel "${what}": expected ${spec.bindings.length} bindings, received ${args.length}`,
    );
  }
  if (spec.params !== (params !== undefined)) {
    throw new Error(
      `Cannot prepare kernel "${what}": params ${
        spec.params ? "missing" : "given to a kernel without params"
      }`,
    );
  }
  const entries: GPUBindGroupEntry[] = args.map((arg, binding) => ({
    binding,
    resource: bindingResource(
      what,
      binding,
      spec.bindings[binding],
      arg,
      gpu.device.limits,
    ),
  }));
  const kernel = await getKernel(gpu, spec);
  const mismatch = params && kernel.params && paramsMismatch(kernel.params, params.fields);
  if (mismatch) {
    throw new Error(
      `Cannot prepare kernel "${kernel.key}" (shaders/${spec.shader}.wgsl): ${mismatch}`,
    );
  }
  const { device } = gpu;
  let paramsBuffer: GPUBuffer | undefined;
  if (params) {
    paramsBuffer = device.createBuffer({
      label: `${kernel.key}:params`,
      size: params.bytes.byteLength,
      usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
    });
    device.queue.writeBuffer(paramsBuffer, 0, params.bytes);
    entries.push({ binding: args.length, resource: { buffer: paramsBuffer } });
  }
  const bindGroup = device.createBindGroup({ label: kernel.key, layout: kernel.layout, entries });
  return {
    label: kernel.key,
    pipeline: kernel.pipeline,
    bindGroup,
    workgroups,
    paramsBuffer,
    before,
    copyVariables,
    variableCopy,
  };
}

/** Frees what a prepared dispatch owns. */
export function releaseDispatch(dispatch: PreparedDispatch): void {
  dispatch.paramsBuffer?.destroy();
}

/** Records one dispatch into an open compute pass. */
export function encodeDispatch(pass: GPUComputePassEncoder, d: PreparedDispatch): void {
  pass.setPipeline(d.pipeline);
  pass.setBindGroup(0, d.bindGroup);
  pass.dispatchWorkgroups(d.workgroups[0], d.workgroups[1], d.workgroups[2]);
}

/** Options of {@link encodeDispatches}. */
export interface EncodeOptions {
  /** The variable copies these dispatches fill hold the variables' latest versions. */
  skipVariableCopies?: boolean;
}

/** Records a dispatch's commands (its variable copies unless skipped); whether it had any. */
export function encodeLaunchCommands(
  encoder: GPUCommandEncoder,
  d: LaunchCommands,
  { skipVariableCopies = false }: EncodeOptions = {},
): boolean {
  const copies = skipVariableCopies ? undefined : d.copyVariables;
  copies?.(encoder);
  d.before?.(encoder);
  return copies !== undefined || d.before !== undefined;
}

/**
 * Records `dispatches` in order into `encoder`, in one compute pass; a dispatch with commands to
 * record before it ends the open pass, records them and begins a new pass. With
 * `skipVariableCopies`, dispatches that only copy variables are left out.
 */
export function encodeDispatches(
  encoder: GPUCommandEncoder,
  dispatches: readonly PreparedDispatch[],
  label = "graph",
  options: EncodeOptions = {},
): void {
  let pass: GPUComputePassEncoder | undefined;
  for (const d of dispatches) {
    if (d.variableCopy && options.skipVariableCopies) continue;
    if (d.before || (d.copyVariables && !options.skipVariableCopies)) {
      pass?.end();
      pass = undefined;
      encodeLaunchCommands(encoder, d, options);
    }
    pass ??= encoder.beginComputePass({ label });
    encodeDispatch(pass, d);
  }
  pass?.end();
}
