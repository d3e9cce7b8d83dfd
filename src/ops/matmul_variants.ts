/**
 * The matmul kernel variants (WGSL file, override constants, workgroup grid, operand bindings);
 * `matmul_autotune.ts` picks among them per adapter and shape. The scalar storage
 * variants handle every shape, transpose combination and batch layout; the vec4 and texture
 * variants only operand layouts they can load four elements at a time (and the texture ones copy
 * into textures; see `misfit`). They differ only in speed.
 * The `gemv_*` variants are `gemv.ts`'s kernels (GPUs only: never timed on CPU adapters). A B
 * stored as bf16 / f16 (`MatmulProblem.bFormat`) is read by `regblock_*`, `tiled_8x8_*`, the
 * `gemv_*` ones and the texture ones that pack it.
 * Shaders: shaders/matmul_regblock.wgsl, shaders/matmul_tiled.wgsl, shaders/matmul_tiled_vec4.wgsl, shaders/matmul_tiled_8x8.wgsl, shaders/matmul_tiled_8x8_half.wgsl, shaders/matmul_texture.wgsl, shaders/matmul_texture_gemv.wgsl, shaders/matmul_skinny.wgsl
 * Reference: src/reference/matmul.ts
 * Test: tests/ops/matmul_test.ts
 */

import type { GpuContext } from "../gpu/device.ts";
import { MAX_WORKGROUPS_PER_DIM } from "../gpu/dispatch.ts";
import { type PackedParams, packParams } from "../gpu/kernel_params.ts";
import type { KernelSpec } from "../gpu/kernel_spec.ts";
import type { KernelLaunch } from "../graph/op.ts";
import {
  linearTexture,
  perRunFills,
  type TextureLaunchContext,
  textureMisfit,
  type TexturePrologue,
  textureWidth,
} from "./operand_texture.ts";
import {
  PACKED_STRIP_COLUMNS,
  packedMisfit,
  type PackedShape,
  packedWeightTexture,
} from "./packed_weight.ts";
import { gemvLaunch, gemvMisfit, type GemvProblem } from "./gemv.ts";
import { weightFormatCode } from "./weight_format.ts";

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
  /** C += op(A) op(B): C's buffer holds a running sum (default false: C is overwritten). */
  accumulate?: boolean;
  /** B holds half-precision values, two per 32-bit word (absent: f32). */
  bFormat?: "bf16" | "f16";
}

/** What a variant needs to produce its launch: the device, and textures that outlive it. */
export type MatmulLaunchContext = TextureLaunchContext;

/**
 * Which operands are variables their graph never writes (weights): a variant's copies of those go
 * in the launch's `copyVariables`, which runs skip while the variables are unchanged.
 */
export interface ConstantOperands {
  a: boolean;
  b: boolean;
}

/** A kernel variant: which problems it handles and its launch for one. */
export interface MatmulVariant {
  readonly name: string;
  /** How A and B are bound: the buffers themselves, or textures copied from them per launch. */
  readonly operands: "storage" | "texture";
  /**
   * It loads four elements at a time, so takes only problems whose stored operands have a
   * contiguous dimension (K of A, M of A^T, N of B, K of B^T) that is a multiple of 4.
   */
  readonly alignedOperands: boolean;
  /**
   * It fills a texture with A, so can compute A there from its buffer (`aPrologue` of
   * {@link launch}) instead of copying it.
   */
  readonly takesPrologue: boolean;
  /** Written for GPUs: CPU adapters never time it (it may still be forced by name). */
  readonly gpuOnly?: boolean;
  /** Why the variant cannot compute `p` on `gpu`, or undefined when it can. */
  misfit(gpu: GpuContext, p: MatmulProblem): string | undefined;
  /**
   * The launches computing `p` from the buffers of A and B into C (the product last, after any
   * packing of B); call via {@link matmulLaunch}. With `aPrologue` (variants that
   * {@link takesPrologue} only) A is what it computes from the buffer `a`.
   */
  launch(
    ctx: MatmulLaunchContext,
    p: MatmulProblem,
    a: GPUBuffer,
    b: GPUBuffer,
    c: GPUBuffer,
    constant: ConstantOperands,
    aPrologue?: TexturePrologue,
  ): KernelLaunch[];
}

/** The override constants every variant takes from the problem (ACCUMULATE only when set). */
function problemConstants(p: MatmulProblem): Record<string, number> {
  return {
    TRANS_A: Number(p.transA),
    TRANS_B: Number(p.transB),
    ...(p.accumulate ? { ACCUMULATE: 1 } : {}),
  };
}

/** The `B_FORMAT` of `p`'s B for the shaders that read a half B (only when half). */
function bFormatConstant(p: MatmulProblem): Record<string, number> {
  return p.bFormat ? { B_FORMAT: weightFormatCode(p.bFormat) } : {};
}

/** Why a variant that reads B as f32 cannot compute `p`; undefined when B is f32. */
function halfBMisfit(p: MatmulProblem): string | undefined {
  return p.bFormat ? `expected an f32 B, received ${p.bFormat}` : undefined;
}

/**
 * A variant binding A, B and C as storage buffers; it handles every problem, or with `aligned`
 * those whose operands it can load four elements at a time, and not those `limit` names a
 * reason against.
 */
function storageVariant(
  name: string,
  spec: (p: MatmulProblem) => Omit<KernelSpec, "bindings" | "params">,
  workgroups: (p: MatmulProblem) => [number, number, number],
  { aligned = false, halfB = false, limit }: {
    aligned?: boolean;
    /** It reads a half-precision B (`MatmulProblem.bFormat`). */
    halfB?: boolean;
    limit?: (p: MatmulProblem) => string | undefined;
  } = {},
): MatmulVariant {
  return {
    name,
    operands: "storage",
    takesPrologue: false,
    alignedOperands: aligned,
    misfit: (_gpu, p) =>
      (halfB ? undefined : halfBMisfit(p)) ?? (aligned ? unalignedOperand(p) : undefined) ??
        limit?.(p),
    launch: (_ctx, p, a, b, c) => [{
      spec: { ...spec(p), bindings: ["read", "read", "read_write"], params: true },
      buffers: [a, b, c],
      params: matmulParams(p),
      workgroups: workgroups(p),
    }],
  };
}

/**
 * `shaders/matmul_regblock.wgsl`: each invocation keeps a (4*rowGroups) x (4*colGroups) block in
 * registers (rowGroups 1..8, colGroups 1..4); 8 invocations per workgroup side by side along N.
 * Fast on CPU adapters, where an invocation is a SIMD lane and every memory load is costly. Reads
 * a B of any format (f32, bf16, f16), so every product by a half-precision weight has a kernel.
 */
function regblock(rowGroups: number, colGroups: number): MatmulVariant {
  if (!(rowGroups >= 1 && rowGroups <= 8 && colGroups >= 1 && colGroups <= 4)) {
    throw new Error(
      `Cannot define regblock matmul ${rowGroups}x${colGroups}: expected 1..8 row groups and 1..4 column groups`,
    );
  }
  const wgX = 8;
  return storageVariant(
    `regblock_${4 * rowGroups}x${4 * colGroups}`,
    (p) => ({
      shader: "matmul_regblock",
      entryPoint: "main",
      constants: {
        WG_X: wgX,
        ROW_GROUPS: rowGroups,
        COL_GROUPS: colGroups,
        ...problemConstants(p),
        ...bFormatConstant(p),
      },
    }),
    (p) => [Math.ceil(p.n / (4 * colGroups * wgX)), Math.ceil(p.m / (4 * rowGroups)), p.batch],
    { halfB: true },
  );
}

/**
 * `shaders/matmul_tiled.wgsl`: a workgroup stages bm x bk of A and bk x bn of B in workgroup
 * memory; each invocation computes 4x4 outputs. The classic GPU kernel.
 */
function tiled(bm: number, bn: number, bk: number): MatmulVariant {
  return storageVariant(
    `tiled_${bm}x${bn}`,
    (p) => ({
      shader: "matmul_tiled",
      entryPoint: "main",
      constants: { BM: bm, BN: bn, BK: bk, ...problemConstants(p) },
    }),
    (p) => [Math.ceil(p.n / bn), Math.ceil(p.m / bm), p.batch],
  );
}

/**
 * `shaders/matmul_tiled_vec4.wgsl`: the workgroup-memory tiles of {@link tiled} loaded and read
 * as vec4s (four elements per load, k-major tiles), for GPUs; with `outputs8x8`
 * `shaders/matmul_tiled_8x8.wgsl`, the same tiles with 8 x 8 outputs per invocation (four times
 * the multiply-adds per read of workgroup memory; bm and bn multiples of 8), which reads a half B
 * too (`shaders/matmul_tiled_8x8_half.wgsl`: a GPU's product by a frozen bf16 / f16 weight over
 * many rows). Needs the contiguous dimension of each stored operand to be a multiple of 4.
 */
function tiledVec4(bm: number, bn: number, bk: number, outputs8x8 = false): MatmulVariant {
  const kernel = outputs8x8
    ? { name: `tiled_8x8_${bm}x${bn}`, shader: "matmul_tiled_8x8" }
    : { name: `tiled_vec4_${bm}x${bn}`, shader: "matmul_tiled_vec4" };
  return storageVariant(
    kernel.name,
    (p) => ({
      ...(p.bFormat ? { shader: "matmul_tiled_8x8_half" } : { shader: kernel.shader }),
      entryPoint: "main",
      constants: { BM: bm, BN: bn, BK: bk, ...problemConstants(p), ...bFormatConstant(p) },
    }),
    (p) => [Math.ceil(p.n / bn), Math.ceil(p.m / bm), p.batch],
    { aligned: true, halfB: outputs8x8 },
  );
}

/** The most rows of C {@link skinny} takes: beyond, the other variants have work enough. */
const SKINNY_MAX_M = 64;

/**
 * `shaders/matmul_skinny.wgsl`: a workgroup computes rows x cols outputs with K split across 32
 * lanes per column and summed in workgroup memory, so a decode-sized M still spreads over
 * thousands of invocations on a GPU. Any layout; only M <= {@link SKINNY_MAX_M}.
 */
function skinny(rows: number, cols: number): MatmulVariant {
  return storageVariant(
    `skinny_${rows}x${cols}`,
    (p) => ({
      shader: "matmul_skinny",
      entryPoint: "main",
      constants: { ROWS: rows, COLS: cols, LANES: 32, ...problemConstants(p) },
    }),
    (p) => [Math.ceil(p.n / cols), Math.ceil(p.m / rows), p.batch],
    {
      limit(p) {
        if (p.m > SKINNY_MAX_M) return `expected M <= ${SKINNY_MAX_M}, received ${p.m}`;
        if (Math.ceil(p.n / cols) <= MAX_WORKGROUPS_PER_DIM) return undefined;
        return `expected N <= ${MAX_WORKGROUPS_PER_DIM * cols} (${MAX_WORKGROUPS_PER_DIM} ` +
          `workgroups of ${cols} columns), received ${p.n}`;
      },
    },
  );
}

/** Each operand's element count in its buffer and its contiguous dimension as stored. */
function operandLayouts(p: MatmulProblem) {
  return [
    {
      operand: "a",
      elements: (p.strideA === 0 ? 1 : p.batch) * p.m * p.k,
      ...(p.transA ? { dim: "M", size: p.m } : { dim: "K", size: p.k }),
    },
    {
      operand: "b",
      elements: (p.strideB === 0 ? 1 : p.batch) * p.k * p.n,
      ...(p.transB ? { dim: "K", size: p.k } : { dim: "N", size: p.n }),
    },
  ] as const;
}

/** op(B) of `p` as a packed weight takes it: its stored rows as output columns. */
function packedRows(p: MatmulProblem): PackedShape {
  const shape = { n: p.transB ? p.n : p.k, k: p.transB ? p.k : p.n, transB: true };
  return p.bFormat ? { ...shape, format: p.bFormat } : shape;
}

/**
 * The fewest rows of A for which a texture variant packs a half-precision B per run: fewer rows
 * (a decode step) read it from storage (`regblock`), the packing costing more than it saves.
 */
const HALF_PACKED_MIN_ROWS = 17;

/**
 * Why a texture variant cannot read `p`'s half-precision B (only packed, for enough rows);
 * undefined for an f32 B or one it can.
 */
function halfPackedMisfit(gpu: GpuContext, p: MatmulProblem): string | undefined {
  if (!p.bFormat) return undefined;
  if (p.m < HALF_PACKED_MIN_ROWS) {
    return `expected at least ${HALF_PACKED_MIN_ROWS} rows to pack a ${p.bFormat} B per run, received ${p.m}`;
  }
  if (!sharedB(p)) return `expected one ${p.bFormat} B shared by the batch to pack`;
  return packedMisfit(gpu, packedRows(p));
}

/**
 * Why `p` does not have the contiguous dimension of each stored operand (K of A, M of A^T, N of
 * B, K of B^T) a multiple of 4, as variants loading four elements at a time need; undefined
 * when it does.
 */
function unalignedOperand(p: MatmulProblem): string | undefined {
  for (const { operand, dim, size } of operandLayouts(p)) {
    if (size % 4 !== 0) {
      return `expected the contiguous dimension of ${operand} (${dim}) to be a multiple of 4, received ${size}`;
    }
  }
  return undefined;
}

/** Whether `p`'s B is one matrix for the whole batch, as a linear layer's weight. */
function sharedB(p: MatmulProblem): boolean {
  return p.batch === 1 || p.strideB === 0;
}

/** Why op(B) of `p` cannot be packed (`packed_weight.ts`) on `gpu`; undefined when it can. */
function packedBMisfit(gpu: GpuContext, p: MatmulProblem): string | undefined {
  if (p.batch > 1 && p.strideB !== 0) {
    return "expected one B shared by every batch to pack, received a B per batch";
  }
  return packedMisfit(gpu, { n: p.n, k: p.k, transB: p.transB });
}

/**
 * Workgroups along N of a texture variant: strips of {@link PACKED_STRIP_COLUMNS} columns,
 * `colQuads` per workgroup (one column quad of each per invocation).
 */
function stripWorkgroups(n: number, colQuads: number): number {
  return Math.ceil(Math.ceil(n / PACKED_STRIP_COLUMNS) / colQuads);
}

/**
 * `shaders/matmul_texture.wgsl`: the (4*rowGroups)x(4*colQuads) register block of the regblock
 * variants, reading A and B from textures that each launch first fills from their buffers
 * (`copyBufferToTexture`). Texel loads are far cheaper than storage loads on CPU adapters; fewer
 * row groups waste less work when M is small (decode), fewer column quads split N into more
 * workgroups (so that a CPU's threads share them evenly: 576 columns as 6 workgroups of 96). A
 * constant B shared by the batch (a weight) is read packed where its packed texture fits
 * (`packed_weight.ts`; its stored rows as output columns, so the NT product by a weight and the
 * NN product by it share the texture), packed only when the variables may have changed. Needs
 * the contiguous dimension of each stored operand to be a multiple of 4 and each operand to fit
 * one texture.
 */
function texture(rowGroups: number, colQuads = 4): MatmulVariant {
  if (!(rowGroups >= 1 && rowGroups <= 8)) {
    throw new Error(`Cannot define texture matmul with ${rowGroups} row groups: expected 1..8`);
  }
  if (!(colQuads >= 1 && colQuads <= 4)) {
    throw new Error(`Cannot define texture matmul with ${colQuads} column quads: expected 1..4`);
  }
  const rows = 4 * rowGroups;
  return {
    name: `texture_${rows}x${4 * colQuads}`,
    operands: "texture",
    takesPrologue: true,
    alignedOperands: true,
    misfit(gpu, p) {
      const unaligned = halfPackedMisfit(gpu, p) ?? unalignedOperand(p);
      if (unaligned) return unaligned;
      for (const { operand, elements } of operandLayouts(p)) {
        const misfit = textureMisfit(gpu, elements, operand);
        if (misfit) return misfit;
      }
      return undefined;
    },
    launch(ctx, p, a, b, c, constant, aPrologue) {
      const [la, lb] = operandLayouts(p);
      const ta = linearTexture(ctx, a, la.elements, "matmul:a", constant.a, aPrologue);
      // A weight's stored rows packed as columns: the texture of the NT product by it, which
      // the NN product by it (a backward) reads as well. A half-precision one is packed (widened)
      // each run into a texture of this op's own: no f32 copy of it outlives the product.
      const byRows = packedRows(p);
      const packed = (constant.b || p.bFormat) && sharedB(p) && !packedMisfit(ctx.gpu, byRows)
        ? packedWeightTexture(ctx, b, byRows, "matmul:b", constant.b && !p.bFormat)
        : undefined;
      const tb = packed ? undefined : linearTexture(ctx, b, lb.elements, "matmul:b", constant.b);
      const operands = [{ texture: ta, constant: constant.a && !aPrologue }];
      if (tb) operands.push({ texture: tb, constant: constant.b });
      // Operands that change every run are filled before each launch; constant ones once per
      // version of their variable, by the first launch of the graph that copies them.
      const perRun = perRunFills(operands.filter((o) => !o.constant).map((o) => o.texture));
      const perVersion = operands.filter((o) => o.constant && !o.texture.copied);
      return [...(packed?.launches ?? []), ...perRun.launches, {
        spec: {
          shader: "matmul_texture",
          entryPoint: "main",
          constants: {
            TEX_W: textureWidth(ctx.gpu),
            ROW_GROUPS: rowGroups,
            COL_QUADS: colQuads,
            VEC4_C: Number(p.n % 4 === 0),
            ...(packed ? { PACKED_B: 1 } : {}),
            ...problemConstants(p),
          },
          bindings: ["texture", "texture", "read_write"],
          params: true,
        },
        buffers: [ta.view, (packed ?? tb)!.view, c],
        params: matmulParams(p),
        workgroups: [stripWorkgroups(p.n, colQuads), Math.ceil(p.m / rows), p.batch],
        ...(perRun.before ? { before: perRun.before } : {}),
        ...(perVersion.length > 0
          ? {
            copyVariables: (encoder: GPUCommandEncoder) =>
              perVersion.forEach((o) => o.texture.copy(encoder)),
          }
          : {}),
      }];
    },
  };
}

/** The most rows of A {@link textureGemv} takes: beyond, it reads the weight once per 4 rows. */
export const GEMV_MAX_M = 16;

/**
 * `shaders/matmul_texture_gemv.wgsl`: `rows` (1..4) rows by 16 columns per invocation (4 strips
 * of 32 columns per workgroup, one column quad of each), A from
 * its buffer, B (a weight stored [N, K] or [K, N], shared by the batch) packed
 * (`packed_weight.ts`; once per change of the variables for a constant one, every run
 * otherwise). For decode on CPU adapters: at one row each weight value is loaded once, from
 * neighbouring texels, and nothing else is in the loop. Needs A not transposed with K a multiple
 * of 4, and M <= {@link GEMV_MAX_M}.
 */
function textureGemv(rows: number): MatmulVariant {
  if (!(rows >= 1 && rows <= 4)) {
    throw new Error(`Cannot define texture gemv matmul with ${rows} rows: expected 1..4`);
  }
  return {
    name: `texture_gemv_${rows}x16`,
    operands: "texture",
    takesPrologue: false,
    alignedOperands: true,
    misfit(gpu, p) {
      if (p.transA) return "expected A not transposed";
      if (p.m > GEMV_MAX_M) return `expected M <= ${GEMV_MAX_M}, received ${p.m}`;
      const unaligned = halfBMisfit(p) ?? unalignedOperand(p);
      if (unaligned) return unaligned;
      return packedBMisfit(gpu, p);
    },
    launch(ctx, p, a, b, c, constant) {
      const tb = packedWeightTexture(ctx, b, p, "matmul:b", constant.b);
      return [...tb.launches, {
        spec: {
          shader: "matmul_texture_gemv",
          entryPoint: "main",
          constants: {
            TEX_W: textureWidth(ctx.gpu),
            ROWS: rows,
            VEC4_C: Number(p.n % 4 === 0),
            ...(p.accumulate ? { ACCUMULATE: 1 } : {}),
          },
          bindings: ["read", "texture", "read_write"],
          params: true,
        },
        buffers: [a, tb.view, c],
        params: matmulParams(p),
        workgroups: [stripWorkgroups(p.n, 4), Math.ceil(p.m / rows), p.batch],
      }];
    },
  };
}

/**
 * `gemv.ts`'s kernels (`shaders/gemv.wgsl`, or `gemv_subgroups.wgsl` where subgroups work): up to
 * 8 rows of A by a weight B stored [N, K] (transposed: x W^T), `cols` columns per workgroup of
 * 256 invocations splitting K, so that a decode step's small products fill a GPU's compute
 * units. One product (a batch folded into rows); K a multiple of 4 (8 for a half-precision B,
 * which the kernels widen as they read it).
 */
function gemv(cols: number, subgroups = false): MatmulVariant {
  return {
    name: `gemv_${subgroups ? "sg_" : ""}c${cols}`,
    operands: "storage",
    takesPrologue: false,
    alignedOperands: true,
    gpuOnly: true,
    misfit(gpu, p) {
      if (p.transA || !p.transB) return "expected A as stored and B transposed (x W^T)";
      if (p.batch > 1) return `expected one product, received a batch of ${p.batch}`;
      return gemvMisfit(gpu, gemvProblem(p), { cols, subgroups });
    },
    launch: (_ctx, p, a, b, c) => [
      gemvLaunch(gemvProblem(p), { a, w: b, c }, {
        cols,
        subgroups,
        accumulate: p.accumulate,
      }),
    ],
  };
}

/** `p` as `gemv.ts` states it (B's format: f32, or the half-precision one it is stored in). */
function gemvProblem(p: MatmulProblem): GemvProblem {
  return { m: p.m, n: p.n, k: p.k, format: p.bFormat ?? "f32" };
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
  tiledVec4(64, 64, 16),
  tiledVec4(128, 128, 8, true),
  tiledVec4(64, 64, 16, true),
  skinny(4, 8),
  texture(8),
  texture(8, 3),
  texture(4),
  texture(4, 3),
  texture(2),
  texture(1),
  textureGemv(1),
  textureGemv(2),
  textureGemv(4),
  gemv(2),
  gemv(4),
  gemv(8),
  gemv(4, true),
  gemv(8, true),
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
export function matmulParams(p: MatmulProblem): PackedParams {
  return packParams({
    m: p.m,
    n: p.n,
    k: p.k,
    stride_a: p.strideA,
    stride_b: p.strideB,
    stride_c: p.strideC,
  });
}

/**
 * The launches of `variant` for `p` on the given buffers (the product last); throws when the
 * variant cannot do `p`. `constant` says which operands are never-written variables (default:
 * neither); `aPrologue`, what A is computed as from `a`'s buffer (variants that take one).
 */
export function matmulLaunch(
  ctx: MatmulLaunchContext,
  variant: MatmulVariant,
  p: MatmulProblem,
  a: GPUBuffer,
  b: GPUBuffer,
  c: GPUBuffer,
  constant: ConstantOperands = { a: false, b: false },
  aPrologue?: TexturePrologue,
): KernelLaunch[] {
  const why = variant.misfit(ctx.gpu, p);
  if (why) {
    throw new Error(
      `Cannot use matmul variant "${variant.name}" for ${p.batch} x [${p.m},${p.k}] @ ` +
        `[${p.k},${p.n}] (${matmulLayout(p)}): ${why}`,
    );
  }
  if (aPrologue && !variant.takesPrologue) {
    throw new Error(
      `Cannot use matmul variant "${variant.name}" with a prologue on A: it reads A's buffer`,
    );
  }
  return variant.launch(ctx, p, a, b, c, constant, aPrologue);
}

/** The transposes and shared operands of a problem, e.g. `NT-sharedB`. */
export function matmulLayout(p: MatmulProblem): string {
  return `${p.transA ? "T" : "N"}${p.transB ? "T" : "N"}` +
    (p.strideA === 0 && p.batch > 1 ? "-sharedA" : "") +
    (p.strideB === 0 && p.batch > 1 ? "-sharedB" : "");
}
