/**
 * The register-blocked attention kernels (`shaders/attention.wgsl`; on CPU adapters
 * `shaders/attention_texture.wgsl`, the same kernels reading textures), written for CPU adapters,
 * where every storage load costs one load per SIMD lane: no workgroup memory, each invocation
 * keeps its home rows' scores in registers and walks the other side's rows. The backward is two
 * kernels, dq (over keys) and dk or dv (over queries, one launch each), all reading the stats of
 * `shaders/attention_stats.wgsl`. The op (`attention.ts`) picks between these and the GPU ones
 * (`flash_attention.ts`) in `attention_kernels.ts`.
 * Shaders: shaders/attention.wgsl, shaders/attention_texture.wgsl
 * Reference: src/reference/attention.ts
 * Test: tests/ops/attention_test.ts
 */

import { MAX_WORKGROUPS_PER_DIM } from "../gpu/dispatch.ts";
import { type PackedParams, packParams } from "../gpu/kernel_params.ts";
import type { KernelLaunch, LaunchContext } from "../graph/op.ts";
import {
  type LinearTexture,
  linearTexture,
  perRunFills,
  textureMisfit,
  textureWidth,
} from "./operand_texture.ts";

/** Sizes of an attention problem, read off q [batch, seq, heads, headDim] and k. */
export interface AttentionDims {
  batch: number;
  seq: number;
  heads: number;
  kvHeads: number;
  headDim: number;
}

/** What an attention kernel computes (see `shaders/lib/attention_core.wgsl`). */
export type AttentionEntry = "forward" | "backward_q" | "backward_kv";

/**
 * The scores' factor, the sliding window (0: none) and the scores' soft cap (0: none; the
 * register kernels only) of an attention op.
 */
export interface AttentionMath {
  scale: number;
  window: number;
  softcap: number;
}

/**
 * The buffers of one attention launch: q, k, v, segment ids, and for the backward the output
 * gradient and the stats; `out` receives the forward's output and its lse from element `lseAt`,
 * the backward's dq, or dk and from element `dvAt` (a multiple of 64) dv.
 */
export interface AttentionBuffers {
  q: GPUBuffer;
  k: GPUBuffer;
  v: GPUBuffer;
  segmentIds: GPUBuffer;
  dO?: GPUBuffer;
  stats?: GPUBuffer;
  out: GPUBuffer;
  lseAt?: number;
  dvAt?: number;
}

/** One launch's worth of an attention op: what it computes, on what, into which buffers. */
export interface AttentionJob {
  /** The op's name, for errors. */
  op: string;
  entry: AttentionEntry;
  dims: AttentionDims;
  bufs: AttentionBuffers;
  math: AttentionMath;
}

/** The uniform params every attention kernel takes (`shaders/lib/attention_params.wgsl`). */
export function attentionParams({ dims, bufs, math }: AttentionJob): PackedParams {
  return packParams({
    seq: dims.seq,
    heads: dims.heads,
    kv_heads: dims.kvHeads,
    head_dim: dims.headDim,
    scale: { f32: math.scale },
    window: math.window,
    lse_at: bufs.lseAt ?? 0,
    dv_at: bufs.dvAt ?? 0,
    softcap: { f32: math.softcap },
  });
}

/** Throws unless every dimension of `grid` is within WebGPU's workgroup count limit. */
export function checkGrid(op: string, grid: readonly number[]): void {
  if (grid.some((n) => n > MAX_WORKGROUPS_PER_DIM)) {
    throw new Error(
      `Cannot launch "${op}": grid [${grid}] exceeds ${MAX_WORKGROUPS_PER_DIM} workgroups per dimension`,
    );
  }
}

/** How a kernel spreads its home rows (queries; keys for dk, dv) over invocations. */
interface Layout {
  /** Invocations per workgroup. */
  wg: number;
  /** Home rows per invocation / 4 (1 or 2). */
  rowGroups: number;
  /** Streamed rows per step / 4 (1 to 4). */
  colGroups: number;
}

/**
 * CPU adapters: one SIMD group (8 invocations); with storage operands, whose every load costs
 * one load per SIMD lane, 8 home rows each, so each streamed element feeds 8 rows; with texture
 * operands 4 (fewer registers; 15% faster backward on llvmpipe). GPUs: 64 invocations of 4
 * rows, a smaller register block.
 */
function layoutFor(ctx: LaunchContext, textures: boolean): Layout {
  if (!ctx.gpu.summary.isFallback) return { wg: 64, rowGroups: 1, colGroups: 4 };
  return { wg: 8, rowGroups: textures ? 1 : 2, colGroups: 4 };
}

/**
 * Accumulator elements (head-dim elements x row groups) an invocation may keep in a private array
 * (`ACC_MEM` in `shaders/lib/attention_core.wgsl`), which CPU adapters do: on llvmpipe that costs
 * far less than updating the out rows in storage once per tile (1.5x faster at head dim 64).
 */
const PRIVATE_ACC_ELEMENTS = 256;

/** Storage textures `shaders/attention_texture.wgsl` binds: q, k, v and d_o. */
const ATTENTION_TEXTURES = 4;

/**
 * Whether a launch reads q, k, v and d_o through textures (`shaders/attention_texture.wgsl`):
 * on CPU adapters that bind {@link ATTENTION_TEXTURES} storage textures, when the head dim is a
 * multiple of 4, the buffers can be copied and each fits one texture.
 */
function readsTextures(ctx: LaunchContext, dims: AttentionDims, buffers: GPUBuffer[]): boolean {
  if (!ctx.gpu.summary.isFallback || dims.headDim % 4 !== 0) return false;
  if (ctx.gpu.device.limits.maxStorageTexturesPerShaderStage < ATTENTION_TEXTURES) return false;
  if (!buffers.every((b) => b.usage & GPUBufferUsage.COPY_SRC)) return false;
  const { batch, seq, heads, headDim } = dims;
  return textureMisfit(ctx.gpu, batch * seq * heads * headDim, "q") === undefined;
}

/** The out binding of a launch: the whole buffer, or dv's part of it from element `at`. */
type OutBinding = GPUBuffer | { buffer: GPUBuffer; offset: number };

/**
 * The launches of `job` on the register kernels (with `gradV`, backward_kv computing dv instead of
 * dk) writing `out`: one workgroup per block of home rows, head (kv head for backward_kv) and batch
 * row; for the texture kernel, the fills of its operand textures before it (each launch copies its
 * operands again: small beside the attention kernels).
 */
function registerLaunch(
  ctx: LaunchContext,
  job: AttentionJob,
  out: OutBinding,
  gradV = false,
): KernelLaunch[] {
  const { op, entry, dims, bufs } = job;
  // q, k, v, d_o: the tensors the kernel reads through `quads` (d_o has q's size).
  const operands = [bufs.q, bufs.k, bufs.v, bufs.dO ?? bufs.q];
  const qSize = dims.batch * dims.seq * dims.heads * dims.headDim;
  const kSize = qSize / dims.heads * dims.kvHeads;
  const sizes = [qSize, kSize, kSize, qSize];
  const textures = readsTextures(ctx, dims, operands);
  const { wg, rowGroups, colGroups } = layoutFor(ctx, textures);
  const grid = [
    Math.ceil(dims.seq / (wg * 4 * rowGroups)),
    entry === "backward_kv" ? dims.kvHeads : dims.heads,
    dims.batch,
  ] as const;
  checkGrid(op, grid);
  const constants: Record<string, number> = {
    WG: wg,
    ROW_GROUPS: rowGroups,
    COL_GROUPS: colGroups,
  };
  if (entry === "backward_kv") constants.GRAD_V = Number(gradV);
  if (ctx.gpu.summary.isFallback && rowGroups * dims.headDim <= PRIVATE_ACC_ELEMENTS) {
    constants.PRIVATE_ACC = 1;
  }
  const params = attentionParams(job);
  const stats = bufs.stats ?? bufs.q;
  if (!textures) {
    const [qb, kb, vb, dob] = operands;
    return [{
      spec: {
        shader: "attention",
        entryPoint: entry,
        constants,
        bindings: ["read", "read", "read", "read", "read", "read", "read_write"],
        params: true,
      },
      buffers: [qb, kb, vb, bufs.segmentIds, dob, stats, out],
      params,
      workgroups: grid,
    }];
  }
  // One texture per distinct buffer (q stands in for absent operands), filled before the launch.
  const copies = new Map<GPUBuffer, LinearTexture>();
  operands.forEach((buffer, i) => {
    if (!copies.has(buffer)) {
      copies.set(buffer, linearTexture(ctx, buffer, sizes[i], `${op}:operand`, false));
    }
  });
  const [tq, tk, tv, tdo] = operands.map((b) => copies.get(b)!.view);
  const fills = perRunFills([...copies.values()]);
  return [...fills.launches, {
    spec: {
      shader: "attention_texture",
      entryPoint: entry,
      constants: { ...constants, TEX_W: textureWidth(ctx.gpu) },
      bindings: ["texture", "texture", "texture", "read", "texture", "read", "read_write"],
      params: true,
    },
    buffers: [tq, tk, tv, bufs.segmentIds, tdo, stats, out],
    params,
    workgroups: grid,
    ...(fills.before ? { before: fills.before } : {}),
  }];
}

/**
 * The register kernels' launches of `job`: the forward (output and lse), dq, or dk and dv as two
 * launches into the two parts of `job.bufs.out`.
 */
export function registerAttentionLaunches(ctx: LaunchContext, job: AttentionJob): KernelLaunch[] {
  const { out, dvAt } = job.bufs;
  if (job.entry !== "backward_kv") return registerLaunch(ctx, job, out);
  return [
    ...registerLaunch(ctx, job, out, false),
    ...registerLaunch(ctx, job, { buffer: out, offset: 4 * (dvAt ?? 0) }, true),
  ];
}
