/**
 * A decoder layer's input RMSNorm and its q, k and v products (plus their biases) at a decode
 * step's few token rows as one GEMV dispatch on GPUs, where a step ran a norm and three products
 * (four dispatches). The output holds q's, k's and v's columns side by side, as one product by the
 * stacked weights [Wq; Wk; Wv] would (a fused qkv module is one weight, then the op is its normed
 * product); each weight is read from its own buffer, f32 or bf16 / f16 as stored, with f32 sums
 * (`gemv.ts`'s core). Inference only (not differentiable); GPUs only: CPU adapters compute the
 * norm in the products' operand fills. {@link normedQkvGemvMisfit} says where it runs.
 * Shaders: shaders/gemv_qkv.wgsl, shaders/gemv_qkv_subgroups.wgsl
 * Reference: src/reference/normed_qkv_gemv.ts
 * Test: tests/ops/normed_qkv_gemv_test.ts
 */

import type { GpuContext } from "../gpu/device.ts";
import type { OpDef } from "../graph/op.ts";
import { isHalf, sameShape, type Tensor } from "../graph/tensor.ts";
import { normedQkvGemvRef } from "../reference/normed_qkv_gemv.ts";
import {
  GEMV_MAX_ROWS,
  gemvCoreConstants,
  gemvMisfit,
  gemvParams,
  type GemvProblem,
  gemvWorkgroups,
} from "./gemv.ts";
import type { WeightFormat } from "./weight_format.ts";

/** Attributes of {@link normedQkvGemv}: the norm's eps and weight offset (Gemma's 1 + gamma). */
export interface NormedQkvAttrs {
  eps: number;
  weightOffset?: number;
}

/** The op's attributes: the norm's, how many weights, and whether biases follow them. */
interface QkvOpAttrs extends NormedQkvAttrs {
  weights: number;
  biased: boolean;
}

/** GEMV columns per workgroup. */
const GPU_COLUMNS = 4;

/** Storage buffers the kernel binds: h, gamma, three weights, three biases, the output. */
const STORAGE_BUFFERS = 9;

/**
 * Why {@link normedQkvGemv} cannot run on `rows` token rows of `k` values by weights stored in
 * `format` on `gpu`, or undefined: a GPU (not a CPU adapter) allowing the kernel's 9 storage
 * buffers, and the GEMV kernels' limits (at most 8 rows, K a multiple of 4, of 8 for halves).
 */
export function normedQkvGemvMisfit(
  gpu: GpuContext,
  { rows, k, format }: { rows: number; k: number; format: WeightFormat },
): string | undefined {
  if (gpu.summary.isFallback) {
    return "expected a GPU (CPU adapters compute the norm in the products' operand fills)";
  }
  const limit = gpu.device.limits.maxStorageBuffersPerShaderStage;
  if (limit < STORAGE_BUFFERS) {
    return `expected ${STORAGE_BUFFERS} storage buffers per shader stage, the device allows ${limit}`;
  }
  return gemvMisfit(gpu, { m: rows, n: 1, k, format }, { cols: GPU_COLUMNS });
}

/** The weights' storage format (their common dtype). */
function formatOf(weights: readonly Tensor[]): WeightFormat {
  const dtype = weights[0].dtype;
  return isHalf(dtype) ? dtype : "f32";
}

/** Throws unless the inputs make the op; returns its output shape. */
function checkOperands(
  inputs: readonly Tensor[],
  { weights: count, biased }: QkvOpAttrs,
): number[] {
  const [h, gamma] = inputs;
  const weights = inputs.slice(2, 2 + count);
  const biases = inputs.slice(2 + count);
  const what = `Cannot apply normed_qkv_gemv to ${inputs.join(", ")}`;
  const k = h.lastDim;
  if (h.dtype !== "f32" || !sameShape(gamma.shape, [k]) || gamma.dtype !== "f32") {
    throw new Error(`${what}: expected f32 rows [..., ${k}] and an f32 norm weight [${k}]`);
  }
  const dtype = weights[0].dtype;
  if (weights.some((w) => w.rank !== 2 || w.shape[1] !== k || w.dtype !== dtype)) {
    throw new Error(`${what}: expected weights of shape [N, ${k}] of one dtype`);
  }
  if (dtype !== "f32" && !isHalf(dtype)) {
    throw new Error(`${what}: expected f32, bf16 or f16 weights`);
  }
  const ns = weights.map((w) => w.shape[0]);
  if (biases.length !== (biased ? count : 0)) {
    throw new Error(`${what}: expected ${biased ? count : 0} biases, received ${biases.length}`);
  }
  if (biases.some((b, i) => b.dtype !== "f32" || !sameShape(b.shape, [ns[i]]))) {
    throw new Error(`${what}: expected f32 biases of shapes ${ns.map((n) => `[${n}]`).join(", ")}`);
  }
  return [...h.shape.slice(0, -1), ns.reduce((a, b) => a + b, 0)];
}

const NORMED_QKV_GEMV: OpDef<QkvOpAttrs> = {
  name: "normed_qkv_gemv",
  output: (inputs, attrs) => ({ shape: checkOperands(inputs, attrs), dtype: "f32" }),
  launch(ctx, inputs, out, attrs) {
    const [h, gamma] = inputs;
    const weights = inputs.slice(2, 2 + attrs.weights);
    const biases = inputs.slice(2 + attrs.weights);
    const ns = weights.map((w) => w.tensor.shape[0]);
    const k = h.tensor.lastDim;
    const p: GemvProblem = {
      m: h.tensor.size / k,
      n: out.tensor.lastDim,
      k,
      format: formatOf(weights.map((w) => w.tensor)),
    };
    if (p.m > GEMV_MAX_ROWS) {
      throw new Error(
        `Cannot launch normed_qkv_gemv on ${p.m} rows: GPUs take at most ${GEMV_MAX_ROWS}`,
      );
    }
    const subgroups = !gemvMisfit(ctx.gpu, p, { cols: GPU_COLUMNS, subgroups: true });
    const opts = {
      cols: GPU_COLUMNS,
      norm: { gamma: gamma.buffer, eps: attrs.eps, weightOffset: attrs.weightOffset },
    };
    const w = weights.map((t) => t.buffer);
    // Unused weights and biases are bound to the first weight (never read).
    const b = biases.length ? biases.map((t) => t.buffer) : [w[0], w[0], w[0]];
    return [{
      spec: {
        ...(subgroups ? { shader: "gemv_qkv_subgroups" } : { shader: "gemv_qkv" }),
        entryPoint: "main",
        constants: { ...gemvCoreConstants(p, opts), ...(attrs.biased ? { BIAS: 1 } : {}) },
        bindings: [...Array(STORAGE_BUFFERS - 1).fill("read"), "read_write"],
        params: true,
      },
      buffers: [h.buffer, gamma.buffer, w[0], w[1] ?? w[0], w[2] ?? w[0], ...b, out.buffer],
      params: gemvParams(p, attrs.eps, ns.length === 3 ? [ns[0], ns[0] + ns[1]] : [p.n, p.n]),
      workgroups: gemvWorkgroups(p.n, GPU_COLUMNS),
    }];
  },
  reference: (data, inputs, { eps, weightOffset, weights: count }) =>
    normedQkvGemvRef(data[0], data[1], data.slice(2, 2 + count), data.slice(2 + count), {
      k: inputs[0].lastDim,
      ns: inputs.slice(2, 2 + count).map((w) => w.shape[0]),
      eps,
      weightOffset,
    }),
};

/**
 * `[x Wq^T + bq, x Wk^T + bk, x Wv^T + bv]` with x = rmsNorm(h, gamma, eps, weightOffset): h
 * [..., K] (at most 8 rows), gamma [K], the three weights [n_i, K] as HF stores them (or one: a
 * fused qkv module's), f32 or bf16 / f16, `biases` one per weight when given; out [..., sum n_i].
 * One launch, on adapters {@link normedQkvGemvMisfit} accepts.
 *
 * @example
 * ```ts
 * import { Graph } from "../graph/graph.ts";
 * const g = new Graph();
 * const [h, norm] = [g.input([1, 1, 576]), g.input([576])];
 * const weights = [g.input([576, 576]), g.input([192, 576]), g.input([192, 576])];
 * const qkv = normedQkvGemv(h, norm, weights, undefined, { eps: 1e-5 }); // [1, 1, 960]
 * ```
 */
export function normedQkvGemv(
  h: Tensor,
  gamma: Tensor,
  weights: readonly Tensor[],
  biases: readonly Tensor[] | undefined,
  attrs: NormedQkvAttrs,
): Tensor {
  if (weights.length !== 1 && weights.length !== 3) {
    throw new Error(`Cannot apply normed_qkv_gemv to ${weights.length} weights: expected 1 or 3`);
  }
  const opAttrs = { ...attrs, weights: weights.length, biased: Boolean(biases) };
  return h.graph.apply(NORMED_QKV_GEMV, [h, gamma, ...weights, ...(biases ?? [])], opAttrs);
}
