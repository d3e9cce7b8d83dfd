/**
 * The matmul kernel variants (WGSL file, override constants, workgroup grid), the heuristic
 * default per adapter and shape, and the autotuned choice among them. Every variant handles
 * every shape, transpose combination and batch layout; they differ only in speed.
 */

import { autotune, autotuneEnabled, type TuneCandidate } from "../gpu/autotune.ts";
import type { GpuContext } from "../gpu/device.ts";
import { type BufferArg, packParams, prepareDispatch } from "../gpu/dispatch.ts";
import type { KernelSpec } from "../gpu/kernel_spec.ts";
import type { KernelLaunch } from "../graph/op.ts";

/** One matmul launch: `batch` products of op(A) [m, k] by op(B) [k, n], strides in elements. */
export interface MatmulProblem {
  batch: number;
  m: number;
  n: number;
  k: number;
  transA: boolean;
  transB: boolean;
  /** Elements between consecutive batches of A (0: one A shared by every batch). */
  strideA: number;
  /** Elements between consecutive batches of B (0: one B shared by every batch). */
  strideB: number;
  strideC: number;
}

/** A kernel variant: its spec and grid for a problem. */
export interface MatmulVariant {
  readonly name: string;
  spec(p: MatmulProblem): KernelSpec;
  workgroups(p: MatmulProblem): [number, number, number];
}

const BINDINGS = ["read", "read", "read_write"] as const;

function transConstants(p: MatmulProblem): Record<string, number> {
  return { TRANS_A: Number(p.transA), TRANS_B: Number(p.transB) };
}

/**
 * `shaders/matmul_regblock.wgsl`: each invocation keeps a (4*rowGroups) x (4*colGroups) block in
 * registers (rowGroups 1..8, colGroups 1..4); 8 invocations per workgroup side by side along N.
 * Fast on CPU adapters, where an invocation is a SIMD lane and every memory load is costly.
 */
function regblock(rowGroups: number, colGroups: number): MatmulVariant {
  if (!(rowGroups >= 1 && rowGroups <= 8 && colGroups >= 1 && colGroups <= 4)) {
    throw new Error(
      `Cannot define regblock matmul ${rowGroups}x${colGroups}: expected 1..8 row groups and 1..4 column groups`,
    );
  }
  const wgX = 8;
  return {
    name: `regblock_${4 * rowGroups}x${4 * colGroups}`,
    spec: (p) => ({
      shader: "matmul_regblock",
      entryPoint: "main",
      constants: { WG_X: wgX, ROW_GROUPS: rowGroups, COL_GROUPS: colGroups, ...transConstants(p) },
      bindings: BINDINGS,
      params: true,
    }),
    workgroups: (p) => [
      Math.ceil(p.n / (4 * colGroups * wgX)),
      Math.ceil(p.m / (4 * rowGroups)),
      p.batch,
    ],
  };
}

/**
 * `shaders/matmul_tiled.wgsl`: a workgroup stages bm x bk of A and bk x bn of B in workgroup
 * memory; each invocation computes 4x4 outputs. The classic GPU kernel.
 */
function tiled(bm: number, bn: number, bk: number): MatmulVariant {
  return {
    name: `tiled_${bm}x${bn}`,
    spec: (p) => ({
      shader: "matmul_tiled",
      entryPoint: "main",
      constants: { BM: bm, BN: bn, BK: bk, ...transConstants(p) },
      bindings: BINDINGS,
      params: true,
    }),
    workgroups: (p) => [Math.ceil(p.n / bn), Math.ceil(p.m / bm), p.batch],
  };
}

/** Every matmul variant, in no particular order. */
export const MATMUL_VARIANTS: readonly MatmulVariant[] = [
  regblock(8, 4),
  regblock(4, 4),
  regblock(8, 2),
  regblock(1, 4),
  regblock(8, 1),
  tiled(64, 64, 16),
  tiled(32, 32, 16),
];

/** The variant called `name`; throws listing the known names. */
export function matmulVariant(name: string): MatmulVariant {
  const variant = MATMUL_VARIANTS.find((v) => v.name === name);
  if (!variant) {
    throw new Error(
      `Unknown matmul variant "${name}": expected one of ${
        MATMUL_VARIANTS.map((v) => v.name).join(", ")
      }`,
    );
  }
  return variant;
}

/** The uniform params every matmul kernel takes (struct `Params` in the shaders). */
export function matmulParams(p: MatmulProblem): ArrayBuffer {
  return packParams([p.m, p.n, p.k, p.strideA, p.strideB, p.strideC]);
}

/** The launch of `variant` for `p` on the given buffers. */
export function matmulLaunch(
  variant: MatmulVariant,
  p: MatmulProblem,
  a: BufferArg,
  b: BufferArg,
  c: BufferArg,
): KernelLaunch {
  return {
    spec: variant.spec(p),
    buffers: [a, b, c],
    params: matmulParams(p),
    workgroups: variant.workgroups(p),
  };
}

/**
 * The default without timing: register blocks on CPU adapters (shaped to skinny problems),
 * workgroup-memory tiles on GPUs.
 */
export function heuristicVariant(gpu: GpuContext, p: MatmulProblem): MatmulVariant {
  if (gpu.summary.isFallback) {
    if (p.m <= 8) return matmulVariant("regblock_4x16");
    if (p.n <= 32) return matmulVariant("regblock_32x4");
    return matmulVariant("regblock_32x16");
  }
  return matmulVariant(p.m >= 64 && p.n >= 64 ? "tiled_64x64" : "tiled_32x32");
}

/** Problems under this many flops are not worth timing: the heuristic picks. */
const TUNE_MIN_FLOPS = 2 ** 22;
/** Timing runs on a stand-in problem of at most this many flops (dims capped at 512). */
const TUNE_MAX_FLOPS = 2 ** 28;
const TUNE_MAX_DIM = 512;

const pow2 = (x: number) => 2 ** Math.ceil(Math.log2(Math.max(1, x)));

/** The autotune key of a problem: dimensions bucketed up to powers of two, plus the layout. */
export function matmulShapeClass(p: MatmulProblem): string {
  const layout = `${p.transA ? "T" : "N"}${p.transB ? "T" : "N"}` +
    (p.strideA === 0 && p.batch > 1 ? "-sharedA" : "") +
    (p.strideB === 0 && p.batch > 1 ? "-sharedB" : "");
  return `b${pow2(p.batch)}-m${pow2(p.m)}-n${pow2(p.n)}-k${pow2(p.k)}-${layout}`;
}

/** A problem of the same class small enough to time quickly. */
function standIn(p: MatmulProblem): MatmulProblem {
  const m = Math.min(p.m, TUNE_MAX_DIM);
  const n = Math.min(p.n, TUNE_MAX_DIM);
  const k = Math.min(p.k, TUNE_MAX_DIM);
  const batch = Math.max(1, Math.min(p.batch, Math.floor(TUNE_MAX_FLOPS / (2 * m * n * k))));
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
  };
}

/**
 * The variant to use for `p`: the autotuned fastest (timed once per adapter and shape class on
 * a stand-in problem, then cached), or the heuristic default for tiny problems and when
 * `RFT_AUTOTUNE=0`.
 */
export async function chooseMatmulVariant(
  gpu: GpuContext,
  p: MatmulProblem,
): Promise<MatmulVariant> {
  const fallback = heuristicVariant(gpu, p);
  if (!autotuneEnabled() || 2 * p.batch * p.m * p.n * p.k < TUNE_MIN_FLOPS) return fallback;
  const s = standIn(p);
  const { device } = gpu;
  const buffer = (elements: number, label: string) =>
    device.createBuffer({
      label: `autotune:${label}`,
      size: Math.max(16, elements * 4),
      usage: GPUBufferUsage.STORAGE,
    });
  const a = buffer((s.strideA === 0 ? 1 : s.batch) * s.m * s.k, "a");
  const b = buffer((s.strideB === 0 ? 1 : s.batch) * s.k * s.n, "b");
  const c = buffer(s.batch * s.m * s.n, "c");
  const candidates: TuneCandidate[] = MATMUL_VARIANTS.map((v) => ({
    name: v.name,
    prepare: async () => [
      await prepareDispatch(gpu, v.spec(s), [a, b, c], matmulParams(s), v.workgroups(s)),
    ],
  }));
  try {
    const name = await autotune(gpu, {
      op: "matmul",
      shapeClass: matmulShapeClass(p),
      candidates,
      fallback: fallback.name,
    });
    return matmulVariant(name);
  } finally {
    a.destroy();
    b.destroy();
    c.destroy();
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
