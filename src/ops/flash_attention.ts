/**
 * The GPU attention kernels (`shaders/flash_attention.wgsl`, FlashAttention-2 style): a workgroup
 * of 16 x HR / 4 invocations owns HR home rows and streams the other side's rows through
 * workgroup memory 64 at a time, as products of 4 x 4 register blocks; the forward keeps an
 * online softmax and saves each row's log-sum-exp, the backward computes dq in one pass over key
 * tiles and dk with dv in one pass over query tiles. The op (`attention.ts`) picks between these
 * and the CPU adapters' register kernels (`attention_register.ts`) in `attention_kernels.ts`.
 * Shader: shaders/flash_attention.wgsl
 * Reference: src/reference/attention.ts
 * Test: tests/ops/flash_attention_test.ts
 */

import type { GpuContext } from "../gpu/device.ts";
import type { KernelLaunch } from "../graph/op.ts";
import {
  type AttentionDims,
  type AttentionJob,
  attentionParams,
  checkGrid,
} from "./attention_register.ts";

/** Home rows per workgroup of a flash kernel variant. */
export type FlashRows = 32 | 64;

/** Streamed rows per tile (`SC`), head-dim quads per accumulator column (`TX`), staging vec4s. */
const TILE = 64;
const QUAD_LANES = 16;
const STAGE_VEC4S = 512;

/** The largest head dim the kernels take: 4 accumulator quads of 16 lanes. */
export const FLASH_MAX_HEAD_DIM = 4 * 4 * QUAD_LANES;

/** Bytes of workgroup memory a kernel of `rows` home rows declares. */
function workgroupBytes(rows: FlashRows): number {
  const vec4s = STAGE_VEC4S + TILE * rows / 4 + 2 * rows / 4 + 2 * TILE / 4;
  const ints = rows + TILE + 2;
  return 16 * vec4s + 4 * ints;
}

/** Why the flash kernels of `rows` home rows cannot run `dims` on `gpu`; undefined when they can. */
export function flashMisfit(
  gpu: GpuContext,
  dims: AttentionDims,
  rows: FlashRows,
): string | undefined {
  if (dims.headDim > FLASH_MAX_HEAD_DIM) {
    return `expected a head dim of at most ${FLASH_MAX_HEAD_DIM}, received ${dims.headDim}`;
  }
  const limits = gpu.device.limits;
  const bytes = workgroupBytes(rows);
  if (bytes > limits.maxComputeWorkgroupStorageSize) {
    return `expected ${bytes} bytes of workgroup memory, the device allows ` +
      `${limits.maxComputeWorkgroupStorageSize}`;
  }
  const invocations = QUAD_LANES * rows / 4;
  if (invocations > limits.maxComputeInvocationsPerWorkgroup) {
    return `expected ${invocations} invocations per workgroup, the device allows ` +
      `${limits.maxComputeInvocationsPerWorkgroup}`;
  }
  return undefined;
}

/** The largest power of two <= x (x >= 1). */
const floorPow2 = (x: number) => 2 ** Math.floor(Math.log2(x));

/** The launch of `job` on the flash kernels with `rows` home rows (check {@link flashMisfit}). */
export function flashAttentionLaunch(job: AttentionJob, rows: FlashRows): KernelLaunch {
  const { op, entry, dims, bufs } = job;
  const quads = Math.ceil(dims.headDim / 4);
  const grid = [
    Math.ceil(dims.seq / rows),
    entry === "backward_kv" ? dims.kvHeads : dims.heads,
    dims.batch,
  ] as const;
  checkGrid(op, grid);
  return {
    spec: {
      shader: "flash_attention",
      entryPoint: entry,
      constants: {
        HR: rows,
        NQ: Math.ceil(quads / QUAD_LANES),
        VK: Math.min(TILE, floorPow2(STAGE_VEC4S / quads)),
      },
      bindings: ["read", "read", "read", "read", "read", "read", "read_write"],
      params: true,
    },
    buffers: [
      bufs.q,
      bufs.k,
      bufs.v,
      bufs.segmentIds,
      bufs.dO ?? bufs.q,
      bufs.stats ?? bufs.q,
      bufs.out,
    ],
    params: attentionParams(job),
    workgroups: grid,
  };
}
