/**
 * Which matmul variant runs a problem: a heuristic default per adapter and shape, or the
 * autotuned choice (timed once per adapter and shape class, cached on disk by
 * `src/gpu/autotune.ts`). The variants themselves are in `matmul_variants.ts`.
 */

import { autotune, autotuneEnabled, type TuneCandidate } from "../gpu/autotune.ts";
import type { GpuContext } from "../gpu/device.ts";
import { encodeDispatches, prepareDispatch, releaseDispatch } from "../gpu/dispatch.ts";
import {
  MATMUL_VARIANTS,
  matmulLaunch,
  type MatmulLaunchContext,
  matmulLayout,
  type MatmulProblem,
  type MatmulVariant,
  matmulVariant,
} from "./matmul_variants.ts";
import { pow2 } from "./operand_texture.ts";
import { PACKED_STRIP_COLUMNS } from "./packed_weight.ts";

/** Whether `variant` may compute `p`: it fits, and needs no textures unless they are allowed. */
function usable(gpu: GpuContext, p: MatmulProblem, textures: boolean, variant: MatmulVariant) {
  return (textures || variant.operands === "storage") && variant.misfit(gpu, p) === undefined;
}

/**
 * Of `quads` (column quads per invocation, i.e. strips of 32 columns per workgroup), the one that
 * spreads the strips of N most evenly over `threads` CPU threads (llvmpipe runs a dispatch's
 * workgroups on one thread per core): the fewest strips per thread, ties to more quads (fewer
 * loads of A per column). 576 columns on 2 threads: 3 quads, 6 workgroups in 3 rounds of 3
 * strips each, against 4 quads' 5 workgroups in 3 rounds of 4.
 */
export function balancedColumnQuads(n: number, threads: number, quads: readonly number[]): number {
  const strips = Math.ceil(n / PACKED_STRIP_COLUMNS);
  const perThread = (q: number) => Math.ceil(Math.ceil(strips / q) / threads) * q;
  return [...quads].sort((a, b) => perThread(a) - perThread(b) || b - a)[0];
}

/** The texture variant of `rows` rows whose column quads suit N on `threads` CPU threads. */
function balancedTextureVariant(rows: number, n: number, threads: number): MatmulVariant {
  const quads = [4, 3, 2, 1].filter((q) =>
    MATMUL_VARIANTS.some((v) => v.name === `texture_${rows}x${4 * q}`)
  );
  return matmulVariant(`texture_${rows}x${4 * balancedColumnQuads(n, threads, quads)}`);
}

/** What {@link heuristicVariant} knows: the operands, and the CPU threads of a CPU adapter. */
export interface HeuristicOptions extends MatmulOperandOptions {
  /** Threads a CPU adapter runs workgroups on (default `navigator.hardwareConcurrency`). */
  cpuThreads?: number;
}

/**
 * The default without timing: on CPU adapters the texture gemv for one or two rows by a weight
 * (`constantB`), else the texture variant where usable (on llvmpipe it beat every storage
 * variant from 64^3 and 1x768x768 up) with the fewest row groups that cover M (up to 4) and the
 * column quads that spread N over the CPU's threads evenly (`cpuThreads`, default
 * `navigator.hardwareConcurrency`), else register blocks shaped to skinny problems. On GPUs, by
 * the classes an H100 tuned (bench/README.md, GPU): the vec4 workgroup tiles for a transposed A
 * (a weight gradient; the fastest of every TN class), the split-K `skinny_4x8` for up to 64 rows
 * (the fastest of nearly every such class), the 8 x 8 workgroup tiles for aligned products of at
 * least 256 in every dimension (every class tuned from 512 x 256 x 1024 up: 1.6x to 3.8x the
 * next variant), else the 4 x 16 register blocks (the fastest of the small classes).
 * `textures` as in {@link chooseMatmulVariant}.
 */
export function heuristicVariant(
  gpu: GpuContext,
  p: MatmulProblem,
  { textures = true, constantB = false, cpuThreads }: HeuristicOptions = {},
): MatmulVariant {
  if (gpu.summary.isFallback) {
    const threads = cpuThreads ?? (navigator.hardwareConcurrency || 1);
    // A weight times a row or two (decode): neighbouring texels of the packed weight.
    const gemv = matmulVariant(`texture_gemv_${p.m === 1 ? 1 : 2}x16`);
    if (constantB && p.m <= 2 && usable(gpu, p, textures, gemv)) return gemv;
    // The fewest rows per block that still cover M, up to 16: skinny M wastes no work, and 16
    // rows by 3 quads beat 32 by 3 or 4 on llvmpipe at 32 and 256 rows (smaller blocks spill
    // less; bench/README.md, thirteenth pass).
    const rows = Math.min(16, Math.max(4, pow2(p.m)));
    const texture = balancedTextureVariant(rows, p.n, threads);
    if (usable(gpu, p, textures, texture)) return texture;
    if (p.m <= 8) return matmulVariant("regblock_4x16");
    if (p.n <= 32) return matmulVariant("regblock_32x4");
    return matmulVariant("regblock_32x16");
  }
  const vec4Tiles = matmulVariant("tiled_vec4_64x64");
  if (p.transA && usable(gpu, p, textures, vec4Tiles)) return vec4Tiles;
  const skinny = matmulVariant("skinny_4x8");
  if (usable(gpu, p, textures, skinny)) return skinny;
  const tiles8x8 = matmulVariant("tiled_8x8_64x64");
  const big = p.m >= 256 && p.n >= 256 && p.k >= 256;
  if (big && usable(gpu, p, textures, tiles8x8)) return tiles8x8;
  return matmulVariant("regblock_4x16");
}

/**
 * The variants the autotune times for `p`: every usable one, except on CPU adapters those written
 * for GPUs, and where a texture variant fits only the texture variants (storage loads run a lane at a time on
 * llvmpipe, so no storage variant has won where a texture one fits, and each candidate costs a
 * pipeline compile of seconds on the first run).
 */
export function candidateVariants(
  gpu: GpuContext,
  p: MatmulProblem,
  textures: boolean,
): MatmulVariant[] {
  const fitting = MATMUL_VARIANTS.filter((v) =>
    usable(gpu, p, textures, v) && !(v.gpuOnly && gpu.summary.isFallback)
  );
  const texture = fitting.filter((v) => v.operands === "texture");
  return gpu.summary.isFallback && texture.length > 0 ? texture : fitting;
}

/**
 * Problems under this many flops are not timed: the heuristic picks. On a CPU adapter each
 * candidate costs a pipeline compile of seconds and small problems are decided by the dispatch
 * overhead; on a GPU compiling and timing every candidate takes milliseconds, and the matmuls of
 * a batch-1 decode step (576 x 576 at SmolLM2's shape: 0.66 Mflop) are where an H100 measured
 * the variants 7.5x apart.
 */
function tuneMinFlops(gpu: GpuContext): number {
  return gpu.summary.isFallback ? 2 ** 22 : 2 ** 16;
}
/**
 * The largest stand-in problem timed (see {@link standIn}): dims up to 512 and 2^28 flops on CPU
 * adapters, where a 512^3 product already takes ~10 ms; up to 2048 and 2^34 flops on GPUs, where
 * a 512 x 512 output fills only 16 workgroups of 128 x 128 tiles, fewer than a large GPU has
 * compute units, so the stand-in would rank the big tiles below what they do on big problems.
 */
function tuneLimits(gpu: GpuContext): { maxDim: number; maxFlops: number } {
  return gpu.summary.isFallback
    ? { maxDim: 512, maxFlops: 2 ** 28 }
    : { maxDim: 2048, maxFlops: 2 ** 34 };
}
/** N of a skinny problem's stand-in (M <= 32, decode): 512 columns fill too few workgroups. */
const TUNE_MAX_SKINNY_N = 8192;

/**
 * The autotune key of a problem: dimensions bucketed up to powers of two, the layout, B's half
 * format if any, and `-tex` when texture variants are among the candidates (the buckets do not
 * decide whether they fit).
 */
export function matmulShapeClass(p: MatmulProblem, withTextures: boolean): string {
  return `b${pow2(p.batch)}-m${pow2(p.m)}-n${pow2(p.n)}-k${pow2(p.k)}-${matmulLayout(p)}` +
    (p.bFormat ? `-${p.bFormat}` : "") + (withTextures ? "-tex" : "");
}

/** A problem of the same class small enough to time quickly. */
function standIn(gpu: GpuContext, p: MatmulProblem): MatmulProblem {
  const { maxDim, maxFlops } = tuneLimits(gpu);
  const m = Math.min(p.m, maxDim);
  const n = Math.min(p.n, p.m <= 32 ? TUNE_MAX_SKINNY_N : maxDim);
  const k = Math.min(p.k, maxDim);
  const batch = Math.max(1, Math.min(p.batch, Math.floor(maxFlops / (2 * m * n * k))));
  return {
    batch,
    m,
    n,
    k,
    transA: p.transA,
    transB: p.transB,
    strideA: p.strideA === 0 ? 0 : m * k,
    strideB: p.strideB === 0 ? 0 : k * n,
    strideC: m * n,
    ...(p.bFormat ? { bFormat: p.bFormat } : {}),
  };
}

/** What {@link chooseMatmulVariant} and {@link heuristicVariant} know of the operands. */
export interface MatmulOperandOptions {
  /** Texture variants may copy the operands (default true; false where they cannot be copied). */
  textures?: boolean;
  /**
   * B is a variable the graph never writes (a weight at inference): its copies into textures,
   * packing included, are made once per change of the variables, so they are not timed.
   */
  constantB?: boolean;
}

/**
 * The variant to use for `p`: the autotuned fastest of those that can compute it (timed once per
 * adapter and shape class on a stand-in problem, then cached), or the heuristic default for tiny
 * problems and when `RFT_AUTOTUNE=0`.
 */
export async function chooseMatmulVariant(
  gpu: GpuContext,
  p: MatmulProblem,
  { textures = true, constantB = false }: MatmulOperandOptions = {},
): Promise<MatmulVariant> {
  const fallback = heuristicVariant(gpu, p, { textures, constantB });
  if (!autotuneEnabled() || 2 * p.batch * p.m * p.n * p.k < tuneMinFlops(gpu)) return fallback;
  const variants = candidateVariants(gpu, p, textures);
  const s = standIn(gpu, p);
  const { device } = gpu;
  const owned: { destroy(): void }[] = [];
  const buffer = (elements: number, label: string) => {
    const made = device.createBuffer({
      label: `autotune:${label}`,
      size: Math.max(16, elements * 4),
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
    });
    owned.push(made);
    return made;
  };
  const ctx: MatmulLaunchContext = {
    gpu,
    texture(descriptor, label) {
      const made = device.createTexture({ ...descriptor, label: `autotune:${label}` });
      owned.push(made);
      return made;
    },
    variableTexture(_source, descriptor, label) {
      return { texture: ctx.texture(descriptor, label), copied: false };
    },
    inputTexture(_source, descriptor, label) {
      return { texture: ctx.texture(descriptor, label), copied: false };
    },
  };
  const a = buffer((s.strideA === 0 ? 1 : s.batch) * s.m * s.k, "a");
  const b = buffer((s.strideB === 0 ? 1 : s.batch) * s.k * s.n, "b");
  const c = buffer(s.batch * s.m * s.n, "c");
  const candidates: TuneCandidate[] = variants.map((v) => ({
    name: v.name,
    prepare: async () => {
      const launches = matmulLaunch(ctx, v, s, a, b, c, { a: false, b: constantB });
      const dispatches = [];
      for (const l of launches) {
        dispatches.push(
          await prepareDispatch(gpu, l.spec, l.buffers, l.params, l.workgroups, l),
        );
      }
      if (!constantB) return dispatches;
      // B's copies (packing included) run once here, not in the timed runs.
      const encoder = device.createCommandEncoder({ label: "autotune:copies" });
      encodeDispatches(encoder, dispatches, "autotune:copies");
      device.queue.submit([encoder.finish()]);
      await device.queue.onSubmittedWorkDone();
      dispatches.filter((d) => d.variableCopy).forEach(releaseDispatch);
      return dispatches.filter((d) => !d.variableCopy)
        .map((d) => ({ ...d, copyVariables: undefined }));
    },
  }));
  try {
    const name = await autotune(gpu, {
      op: "matmul",
      shapeClass: matmulShapeClass(p, variants.some((v) => v.operands === "texture")) +
        (constantB ? "-constB" : ""),
      candidates,
      fallback: fallback.name,
    });
    return matmulVariant(name);
  } finally {
    owned.forEach((x) => x.destroy());
  }
}

/** Shapes `rft info` tunes to show the choices: a square one and a decode-like skinny one. */
export const MATMUL_EXAMPLE_SHAPES = [
  { m: 512, n: 512, k: 512 },
  { m: 1, n: 3072, k: 768 },
] as const;

/** Runs (or recalls) the matmul autotune for {@link MATMUL_EXAMPLE_SHAPES}. */
export async function tuneMatmulExamples(
  gpu: GpuContext,
): Promise<{ shape: string; variant: string }[]> {
  const out = [];
  for (const { m, n, k } of MATMUL_EXAMPLE_SHAPES) {
    const p: MatmulProblem = {
      batch: 1,
      m,
      n,
      k,
      transA: false,
      transB: false,
      strideA: m * k,
      strideB: k * n,
      strideC: m * n,
    };
    out.push({ shape: `${m}x${k} @ ${k}x${n}`, variant: (await chooseMatmulVariant(gpu, p)).name });
  }
  return out;
}
