/**
 * The GPU GEMV kernels (`shaders/gemv.wgsl`, `shaders/gemv_subgroups.wgsl` over
 * `shaders/lib/gemv_core.wgsl`, which `normed_qkv_gemv.ts`'s q/k/v kernels share): a decode step's product of up to 8 rows by a weight stored
 * [N, K] (HF's layout, the product x W^T), f32 or f16 / bf16 packed two per u32, with f32 sums; a
 * workgroup of 256 invocations owns a few columns and splits K over its lanes, so a small product
 * still spreads over many workgroups. Options fuse what a decoder layer does around its products:
 * the RMSNorm of x, a second (gated) weight with its activation (SwiGLU), and adding into the
 * output (the residual). Launched by the matmul variants `gemv_*` (`matmul_variants.ts`, f32 or
 * half weights) and `normedGatedGemv` on GPUs.
 * Shaders: shaders/gemv.wgsl, shaders/gemv_subgroups.wgsl
 * Reference: src/reference/matmul.ts
 * Test: tests/ops/half_weight_kernels_test.ts
 */

import type { GpuContext } from "../gpu/device.ts";
import { grid1d } from "../gpu/dispatch.ts";
import { type PackedParams, packParams } from "../gpu/kernel_params.ts";
import type { KernelLaunch } from "../graph/op.ts";
import { UNARY_OPS, type UnaryKind } from "./unary.ts";
import { type WeightFormat, weightFormatCode } from "./weight_format.ts";

/** The most rows of x the kernels take (their accumulators: two vec4s per lane). */
export const GEMV_MAX_ROWS = 8;

/** Invocations per workgroup (`256u` in the shader's LANES = 256 / COLS). */
const WORKGROUP = 256;

/** The GEMV problem: M rows of x [M, K] by a weight [N, K] in `format`. */
export interface GemvProblem {
  m: number;
  n: number;
  k: number;
  format: WeightFormat;
}

/** What a GEMV launch fuses and how it is laid out. */
export interface GemvOptions {
  /** Output columns per workgroup (a power of two, 1 to 64). */
  cols: number;
  /** Sum the lanes by subgroup operations (devices where `subgroups` works). */
  subgroups?: boolean;
  /**
   * x is the RMSNorm of the rows of a with this weight buffer ([K]), eps and weight offset (added
   * to the weight: Gemma's 1 + gamma; default 0).
   */
  norm?: { gamma: GPUBuffer; eps: number; weightOffset?: number };
  /** out = f(x W^T) * (x W2^T): the second weight's buffer (same format) and f. */
  gated?: { w2: GPUBuffer; activation: UnaryKind };
  /** Add the product to what the output buffer holds. */
  accumulate?: boolean;
}

/** Elements per u32 word of a stored weight. */
function perWord(format: WeightFormat): number {
  return format === "f32" ? 1 : 2;
}

/** Why the GEMV kernels cannot run `p` with `opts` on `gpu`; undefined when they can. */
export function gemvMisfit(
  gpu: GpuContext,
  p: GemvProblem,
  opts: Pick<GemvOptions, "cols" | "subgroups">,
): string | undefined {
  if (p.m > GEMV_MAX_ROWS) return `expected at most ${GEMV_MAX_ROWS} rows, received ${p.m}`;
  const chunk = 4 * perWord(p.format);
  if (p.k % chunk !== 0) {
    return `expected K a multiple of ${chunk} for ${p.format} weights, received ${p.k}`;
  }
  if (!opts.subgroups) return undefined;
  if (!gpu.hasSubgroups) return "expected a device where subgroups work";
  const lanes = WORKGROUP / opts.cols;
  const [, maxSize] = gpu.summary.subgroupSizes;
  if (lanes % maxSize !== 0) {
    return `expected ${lanes} lanes per column to be a multiple of the subgroup size ${maxSize}`;
  }
  return undefined;
}

/**
 * The override constants `shaders/lib/gemv_core.wgsl` takes for `p` laid out and fused as `opts`
 * says (every GEMV kernel's).
 */
export function gemvCoreConstants(p: GemvProblem, opts: GemvOptions): Record<string, number> {
  return {
    COLS: opts.cols,
    ROWS: 2 ** Math.ceil(Math.log2(Math.max(1, p.m))),
    FORMAT: weightFormatCode(p.format),
    ...(opts.norm ? { NORM: 1 } : {}),
    ...(opts.norm?.weightOffset ? { WEIGHT_OFFSET: opts.norm.weightOffset } : {}),
    ...(opts.gated ? { GATED: 1, OP: UNARY_OPS.indexOf(opts.gated.activation) } : {}),
    ...(opts.accumulate ? { ACCUMULATE: 1 } : {}),
  };
}

/**
 * The params of a GEMV kernel of `p` (the core's `struct Params`): the norm's eps and the first
 * columns of k and of v (`bounds`: q/k/v kernels; others pass [n, n]).
 */
export function gemvParams(p: GemvProblem, eps: number, bounds: [number, number]): PackedParams {
  return packParams({ m: p.m, n: p.n, k: p.k, eps: { f32: eps }, n1: bounds[0], n2: bounds[1] });
}

/** The workgroups of a GEMV kernel over `n` columns, `cols` per workgroup. */
export function gemvWorkgroups(n: number, cols: number): [number, number, number] {
  return grid1d(Math.ceil(n / cols));
}

/** The GEMV launch of `p` reading a [M, K] and the weight w [N, K] into c [M, N]. */
export function gemvLaunch(
  p: GemvProblem,
  bufs: { a: GPUBuffer; w: GPUBuffer; c: GPUBuffer },
  opts: GemvOptions,
): KernelLaunch {
  return {
    spec: {
      ...(opts.subgroups ? { shader: "gemv_subgroups" } : { shader: "gemv" }),
      entryPoint: "main",
      constants: gemvCoreConstants(p, opts),
      bindings: ["read", "read", "read", "read", "read_write"],
      params: true,
    },
    buffers: [bufs.a, opts.norm?.gamma ?? bufs.a, bufs.w, opts.gated?.w2 ?? bufs.w, bufs.c],
    params: gemvParams(p, opts.norm?.eps ?? 0, [p.n, p.n]),
    workgroups: gemvWorkgroups(p.n, opts.cols),
  };
}
