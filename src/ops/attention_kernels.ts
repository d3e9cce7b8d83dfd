/**
 * Which attention kernels run a problem: the register-blocked ones written for CPU adapters
 * (`attention_register.ts`) or the FlashAttention-2-style ones for GPUs (`flash_attention.ts`,
 * with 64 or 32 home rows per workgroup). CPU adapters keep the register kernels untimed (their
 * every candidate is a compile of seconds, and workgroup memory costs there); GPUs time the
 * candidates that fit, once per adapter and shape class (`src/gpu/autotune.ts`), defaulting to
 * `flash64` where untimed.
 */

import { autotune, autotuneEnabled, type TuneCandidate } from "../gpu/autotune.ts";
import type { GpuContext } from "../gpu/device.ts";
import { prepareDispatch } from "../gpu/dispatch.ts";
import type { KernelLaunch, LaunchContext } from "../graph/op.ts";
import {
  type AttentionBuffers,
  type AttentionDims,
  type AttentionEntry,
  type AttentionJob,
  registerAttentionLaunches,
} from "./attention_register.ts";
import { flashAttentionLaunch, flashMisfit, type FlashRows } from "./flash_attention.ts";
import { pow2 } from "./operand_texture.ts";

/** The attention kernel families a launch may use. */
export const ATTENTION_KERNELS = ["register", "flash64", "flash32"] as const;

/** One of {@link ATTENTION_KERNELS}. */
export type AttentionKernel = typeof ATTENTION_KERNELS[number];

const FLASH_ROWS: Record<AttentionKernel, FlashRows | undefined> = {
  register: undefined,
  flash64: 64,
  flash32: 32,
};

/** Why `kernel` cannot run `dims` on `gpu`; undefined when it can. */
export function attentionKernelMisfit(
  gpu: GpuContext,
  dims: AttentionDims,
  kernel: AttentionKernel,
): string | undefined {
  const rows = FLASH_ROWS[kernel];
  return rows === undefined ? undefined : flashMisfit(gpu, dims, rows);
}

/** The launches of `job` with `kernel` (which must fit; see {@link attentionKernelMisfit}). */
export function attentionLaunches(
  ctx: LaunchContext,
  job: AttentionJob,
  kernel: AttentionKernel,
): KernelLaunch[] {
  const rows = FLASH_ROWS[kernel];
  if (rows === undefined) return registerAttentionLaunches(ctx, job);
  return [flashAttentionLaunch(job, rows)];
}

/** The untimed choice: the register kernels on CPU adapters, `flash64` on GPUs where it fits. */
export function defaultAttentionKernel(gpu: GpuContext, dims: AttentionDims): AttentionKernel {
  if (gpu.summary.isFallback) return "register";
  return attentionKernelMisfit(gpu, dims, "flash64") === undefined ? "flash64" : "register";
}

/** Problems under this many score flops take the untimed choice (a dispatch's latency rules). */
const TUNE_MIN_FLOPS = 2 ** 22;
/** The most elements of q a stand-in problem has (fewer batch rows than the real one beyond). */
const STAND_IN_MAX_ELEMENTS = 2 ** 23;

/** The autotune key of a problem: entry, batch and sequence bucketed, heads, head dim, window. */
export function attentionShapeClass(
  entry: AttentionEntry,
  dims: AttentionDims,
  window: number,
): string {
  return `${entry}-b${pow2(dims.batch)}-h${dims.heads}-kv${dims.kvHeads}-t${pow2(dims.seq)}` +
    `-d${dims.headDim}` + (window > 0 ? `-w${pow2(window)}` : "");
}

/**
 * The kernel for `job` (its buffers unused): `forced` when given (throwing when it does not fit),
 * else the untimed default on CPU adapters, for small problems and with `RFT_AUTOTUNE=0`, else the
 * fastest fitting candidate as timed on a stand-in problem of the same class; soft-capped scores
 * take the register kernels.
 */
export async function chooseAttentionKernel(
  gpu: GpuContext,
  { op, entry, dims, math }: Omit<AttentionJob, "bufs">,
  forced?: AttentionKernel,
): Promise<AttentionKernel> {
  // Only the register kernels soft-cap scores.
  if (math.softcap > 0) {
    if (forced && forced !== "register") {
      throw new Error(`Cannot run "${op}" with the ${forced} kernels: they do not soft-cap scores`);
    }
    return "register";
  }
  if (forced) {
    const why = attentionKernelMisfit(gpu, dims, forced);
    if (why) throw new Error(`Cannot run "${op}" with the ${forced} kernels: ${why}`);
    return forced;
  }
  const fallback = defaultAttentionKernel(gpu, dims);
  const flops = 2 * dims.batch * dims.heads * dims.seq * dims.seq * dims.headDim;
  if (gpu.summary.isFallback || !autotuneEnabled() || flops < TUNE_MIN_FLOPS) return fallback;
  const kernels = ATTENTION_KERNELS.filter((k) => !attentionKernelMisfit(gpu, dims, k));
  const standIn = {
    ...dims,
    batch: Math.max(
      1,
      Math.min(
        dims.batch,
        Math.floor(STAND_IN_MAX_ELEMENTS / (dims.seq * dims.heads * dims.headDim)),
      ),
    ),
  };
  const owned: GPUBuffer[] = [];
  try {
    const job = {
      op,
      entry,
      dims: standIn,
      bufs: standInBuffers(gpu, entry, standIn, owned),
      math,
    };
    const ctx = standInContext(gpu);
    const candidates: TuneCandidate[] = kernels.map((kernel) => ({
      name: kernel,
      prepare: () =>
        Promise.all(
          attentionLaunches(ctx, job, kernel).map((l) =>
            prepareDispatch(gpu, l.spec, l.buffers, l.params, l.workgroups, l)
          ),
        ),
    }));
    const name = await autotune(gpu, {
      op: "attention",
      shapeClass: attentionShapeClass(entry, dims, math.window),
      candidates,
      fallback,
    });
    return name as AttentionKernel;
  } finally {
    owned.forEach((b) => b.destroy());
  }
}

/** Elements of the output of `entry` (dk and dv: two parts, dv from {@link dvOffset}). */
export function attentionOutElements(entry: AttentionEntry, dims: AttentionDims): number {
  const rows = dims.batch * dims.seq;
  const q = rows * dims.heads * dims.headDim;
  if (entry === "forward") return q + rows * dims.heads;
  if (entry === "backward_q") return q;
  return 2 * dvOffset(dims);
}

/** The element where dv starts in the backward_kv output: dk's size, rounded to 64 (256 bytes). */
export function dvOffset(dims: AttentionDims): number {
  return Math.ceil(dims.batch * dims.seq * dims.kvHeads * dims.headDim / 64) * 64;
}

/** Zeroed buffers (segment ids 0: every causal pair attends) for timing `entry` on `dims`. */
function standInBuffers(
  gpu: GpuContext,
  entry: AttentionEntry,
  dims: AttentionDims,
  owned: GPUBuffer[],
): AttentionBuffers {
  const buffer = (elements: number, label: string) => {
    const made = gpu.device.createBuffer({
      label: `autotune:attention:${label}`,
      size: Math.max(16, 4 * elements),
      usage: GPUBufferUsage.STORAGE,
    });
    owned.push(made);
    return made;
  };
  const rows = dims.batch * dims.seq;
  const q = buffer(rows * dims.heads * dims.headDim, "q");
  const kv = rows * dims.kvHeads * dims.headDim;
  return {
    q,
    k: buffer(kv, "k"),
    v: buffer(kv, "v"),
    segmentIds: buffer(rows, "segment_ids"),
    dO: buffer(rows * dims.heads * dims.headDim, "d_o"),
    stats: buffer(rows * dims.heads * 2, "stats"),
    out: buffer(attentionOutElements(entry, dims), "out"),
    lseAt: rows * dims.heads * dims.headDim,
    dvAt: dvOffset(dims),
  };
}

/** A launch context for timing on a GPU, where the attention kernels use no textures or scratch. */
function standInContext(gpu: GpuContext): LaunchContext {
  const unused = (): never => {
    throw new Error("attention autotune: the GPU kernels use no textures or scratch buffers");
  };
  return {
    gpu,
    scratch: unused,
    texture: unused,
    variableTexture: unused,
    inputTexture: unused,
    isConstantVariable: () => false,
  };
}
