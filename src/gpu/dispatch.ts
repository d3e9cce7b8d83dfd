/**
 * Prepared kernel launches: a compiled pipeline with its bind group, params and workgroup
 * counts, made once and encoded many times. `encodeDispatches` records a list of them into one
 * command encoder; with `RFT_DEBUG=2` each gets its own pass with timestamp queries.
 */

import type { GpuContext } from "./device.ts";
import type { KernelSpec } from "./kernel_spec.ts";
import { getKernel } from "./pipeline_cache.ts";

/** A storage binding: a whole buffer or a byte range of one. */
export type BufferArg = GPUBuffer | { buffer: GPUBuffer; offset?: number; size?: number };

/** One kernel launch, ready to encode. */
export interface PreparedDispatch {
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

/**
 * Packs a params struct: each entry is a u32 (integer given as number), an f32 (`{f32: x}`) or
 * an i32 (`{i32: x}`); the result is padded to 16 bytes as uniform buffers require.
 */
export function packParams(fields: readonly (number | { f32: number } | { i32: number })[]) {
  const words = Math.max(4, Math.ceil(fields.length / 4) * 4);
  const buffer = new ArrayBuffer(words * 4);
  const view = new DataView(buffer);
  fields.forEach((field, i) => {
    if (typeof field === "number") view.setUint32(i * 4, field, true);
    else if ("f32" in field) view.setFloat32(i * 4, field.f32, true);
    else view.setInt32(i * 4, field.i32, true);
  });
  return buffer;
}

/** Compiles (or reuses) the kernel and builds its bind group and params buffer. */
export async function prepareDispatch(
  gpu: GpuContext,
  spec: KernelSpec,
  buffers: readonly BufferArg[],
  params: ArrayBuffer | undefined,
  workgroups: readonly [number, number, number],
): Promise<PreparedDispatch> {
  if (buffers.length !== spec.bindings.length) {
    throw new Error(
      `Cannot prepare kernel "${spec.shader}.${spec.entryPoint}": expected ${spec.bindings.length} buffers, received ${buffers.length}`,
    );
  }
  if (spec.params !== (params !== undefined)) {
    throw new Error(
      `Cannot prepare kernel "${spec.shader}.${spec.entryPoint}": params ${
        spec.params ? "missing" : "given to a kernel without params"
      }`,
    );
  }
  const kernel = await getKernel(gpu, spec);
  const { device } = gpu;
  const entries: GPUBindGroupEntry[] = buffers.map((arg, binding) => ({
    binding,
    resource: "buffer" in arg ? arg : { buffer: arg },
  }));
  let paramsBuffer: GPUBuffer | undefined;
  if (params) {
    paramsBuffer = device.createBuffer({
      label: `${kernel.key}:params`,
      size: params.byteLength,
      usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
    });
    device.queue.writeBuffer(paramsBuffer, 0, params);
    entries.push({ binding: buffers.length, resource: { buffer: paramsBuffer } });
  }
  const bindGroup = device.createBindGroup({ label: kernel.key, layout: kernel.layout, entries });
  return { label: kernel.key, pipeline: kernel.pipeline, bindGroup, workgroups, paramsBuffer };
}

/** Frees what a prepared dispatch owns. */
export function releaseDispatch(dispatch: PreparedDispatch): void {
  dispatch.paramsBuffer?.destroy();
}

/** Records `dispatches` in order into `encoder`, all in one compute pass. */
export function encodeDispatches(
  encoder: GPUCommandEncoder,
  dispatches: readonly PreparedDispatch[],
  label = "graph",
): void {
  const pass = encoder.beginComputePass({ label });
  for (const d of dispatches) {
    pass.setPipeline(d.pipeline);
    pass.setBindGroup(0, d.bindGroup);
    pass.dispatchWorkgroups(d.workgroups[0], d.workgroups[1], d.workgroups[2]);
  }
  pass.end();
}
