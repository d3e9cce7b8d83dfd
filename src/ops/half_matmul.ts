/**
 * `halfMatmul`: the product of f32 activations by a weight stored in 16-bit floats, f16 or bf16
 * packed two per u32 (element 2i in the low half: the bytes of a safetensors F16 / BF16 tensor,
 * uploaded as they are), each element widened to f32 as it is read and every sum in f32. Up to 8
 * rows by a weight used transposed (a decode step's x W^T) run on the GEMV kernels (`gemv.ts`:
 * 256 invocations per workgroup of a few columns), everything else on the 8 x 8 workgroup tiles
 * of `shaders/matmul_half_tiled.wgsl`. Differentiable in the activations (dx is the product by W
 * the other way round); the weight gets no gradient (a frozen base, as under LoRA). The kernels'
 * error against f64 sums of the rounded weights is f32 rounding alone (tests/ops/
 * half_matmul_test.ts measures both that and the rounding of the weights themselves).
 * Shader: shaders/matmul_half_tiled.wgsl
 * Reference: src/reference/half_weights.ts, src/reference/matmul.ts
 * Test: tests/ops/half_matmul_test.ts
 */

import type { GpuContext } from "../gpu/device.ts";
import type { KernelLaunch, OpDef } from "../graph/op.ts";
import { formatShape, type Tensor } from "../graph/tensor.ts";
import { matmulRef } from "../reference/matmul.ts";
import { type HalfFormat, unpackHalvesRef } from "../reference/half_weights.ts";
import { GEMV_MAX_ROWS, gemvLaunch, gemvMisfit } from "./gemv.ts";
import { matmulParams, type MatmulProblem } from "./matmul_variants.ts";

export type { HalfFormat } from "../reference/half_weights.ts";

/** The kernels of a half-weight product: the GEMV kernels, or the workgroup tiles. */
export type HalfKernel = "gemv" | "tiled";

/** Options of {@link halfMatmul}. */
export interface HalfMatmulOptions {
  format: HalfFormat;
  /** The weight is stored [N, K] and used transposed (x W^T, HF's linear layers). */
  transB?: boolean;
  /** Forces the kernels (tests, benches); otherwise the GEMV ones for up to 8 rows of x W^T. */
  kernel?: HalfKernel;
}

interface HalfAttrs {
  format: HalfFormat;
  transB: boolean;
  kernel?: HalfKernel;
}

/** Rows, K and N of `x @ op(w)`, checked; `what` names the op's operands in errors. */
function halfDims(x: Tensor, w: Tensor, transB: boolean): { rows: number; k: number; n: number } {
  const what = `Cannot apply "half_matmul" to ${x} and ${w}`;
  if (x.dtype !== "f32" || x.rank < 1) throw new Error(`${what}: expected f32 activations`);
  if (w.dtype !== "u32" || w.rank !== 2) {
    throw new Error(`${what}: expected a weight of halves packed two per u32, [rows, cols / 2]`);
  }
  const [r, half] = w.shape;
  const [k, n] = transB ? [2 * half, r] : [r, 2 * half];
  if (x.lastDim !== k) {
    throw new Error(
      `${what}: expected activations with K = ${k} columns (the weight holds ${
        transB ? `[${n}, ${k}]` : `[${k}, ${n}]`
      } halves), received ${formatShape(x.shape)}`,
    );
  }
  if (k % 4 !== 0 || n % 4 !== 0) {
    throw new Error(
      `${what}: expected both dims of the weight multiples of 4 (as every model's are; the ` +
        `kernels read four at a time, the backward too), received [${
          transB ? `${n}, ${k}` : `${k}, ${n}`
        }]`,
    );
  }
  return { rows: x.size / k, k, n };
}

/** The tile problem of the product (rows folded into M). */
function tileProblem(rows: number, k: number, n: number, transB: boolean): MatmulProblem {
  return {
    batch: 1,
    m: rows,
    n,
    k,
    transA: false,
    transB,
    strideA: rows * k,
    strideB: 0,
    strideC: rows * n,
  };
}

/**
 * The kernels for the product: `forced`, else the GEMV ones where they fit, else the tiles (which
 * take every product {@link halfDims} accepts).
 */
function chooseHalfKernel(
  gpu: GpuContext,
  dims: { rows: number; k: number; n: number },
  attrs: HalfAttrs,
): HalfKernel {
  const gemvWhy = attrs.transB
    ? gemvMisfit(gpu, { m: dims.rows, n: dims.n, k: dims.k, format: attrs.format }, { cols: 4 })
    : "expected the weight used transposed (x W^T)";
  const kernel = attrs.kernel ?? (!gemvWhy && dims.rows <= GEMV_MAX_ROWS ? "gemv" : "tiled");
  if (kernel === "gemv" && gemvWhy) {
    throw new Error(`Cannot run "half_matmul" with the gemv kernels: ${gemvWhy}`);
  }
  return kernel;
}

/** Tile sizes: 128 x 128 where both output dims fill them many times, else 64 x 64. */
function tileSize(rows: number, n: number): number {
  return rows >= 1024 && n >= 1024 ? 128 : 64;
}

const HALF_MATMUL: OpDef<HalfAttrs> = {
  name: "half_matmul",
  output([x, w], { transB }) {
    const { n } = halfDims(x, w, transB);
    return { shape: [...x.shape.slice(0, -1), n], dtype: "f32" };
  },
  launch(ctx, [x, w], out, attrs): KernelLaunch[] {
    const dims = halfDims(x.tensor, w.tensor, attrs.transB);
    const kernel = chooseHalfKernel(ctx.gpu, dims, attrs);
    if (kernel === "gemv") {
      const p = { m: dims.rows, n: dims.n, k: dims.k, format: attrs.format };
      const subgroups = !gemvMisfit(ctx.gpu, p, { cols: 4, subgroups: true });
      return [gemvLaunch(p, { a: x.buffer, w: w.buffer, c: out.buffer }, { cols: 4, subgroups })];
    }
    const p = tileProblem(dims.rows, dims.k, dims.n, attrs.transB);
    const tile = tileSize(dims.rows, dims.n);
    return [{
      spec: {
        shader: "matmul_half_tiled",
        entryPoint: "main",
        constants: {
          BM: tile,
          BN: tile,
          BK: tile === 128 ? 8 : 16,
          TRANS_B: Number(attrs.transB),
          FORMAT: attrs.format === "f16" ? 1 : 2,
        },
        bindings: ["read", "read", "read_write"],
        params: true,
      },
      buffers: [x.buffer, w.buffer, out.buffer],
      params: matmulParams(p),
      workgroups: [Math.ceil(dims.n / tile), Math.ceil(dims.rows / tile), 1],
    }];
  },
  reference([x, w], [xt, wt], { format, transB }) {
    const { rows, k, n } = halfDims(xt, wt, transB);
    const weights = unpackHalvesRef(Uint32Array.from(w), format);
    return matmulRef(x, weights, tileProblem(rows, k, n, transB));
  },
  backward(grad, [, w], _out, attrs) {
    // y = x op(W): dx = dy op(W)^T, the same weight read the other way.
    return [halfMatmul(grad, w, { ...attrs, transB: !attrs.transB, kernel: undefined }), null];
  },
};

/**
 * `x @ W^T` (`transB`, W stored [N, K]) or `x @ W` (W stored [K, N]) with W a u32 tensor holding
 * halves of `format` packed two per u32 ([N, K / 2] or [K, N / 2]): x [..., K] f32, result
 * [..., N] f32.
 *
 * @example
 * ```ts
 * import { Graph } from "../graph/graph.ts";
 * const g = new Graph();
 * const x = g.input([1, 576]);
 * const w = g.input([1536, 288], "u32"); // an F16 [1536, 576] weight's bytes
 * const y = halfMatmul(x, w, { format: "f16", transB: true }); // [1, 1536]
 * ```
 */
export function halfMatmul(x: Tensor, w: Tensor, options: HalfMatmulOptions): Tensor {
  const attrs: HalfAttrs = {
    format: options.format,
    transB: Boolean(options.transB),
    ...(options.kernel ? { kernel: options.kernel } : {}),
  };
  return x.graph.apply(HALF_MATMUL, [x, w], attrs);
}
