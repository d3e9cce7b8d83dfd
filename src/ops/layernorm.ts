/**
 * LayerNorm over the last axis, and the machinery it shares with RMSNorm (`rmsnorm.ts`): one
 * shader, `shaders/layernorm.wgsl`, serves both, RMSNorm being LayerNorm without centering and
 * bias. Backward: dx from a row kernel that recomputes the row statistics, the weight gradient
 * as per-element terms summed over rows by `sumTo`, the bias gradient as `sumTo` of the output
 * gradient. The backward ops are not differentiable. f32 only; weight and bias are [C], C the
 * last dimension of x.
 * Shader: shaders/layernorm.wgsl
 * Reference: src/reference/layernorm.ts
 * Test: tests/ops/layernorm_test.ts
 */

import type { GpuContext } from "../gpu/device.ts";
import { grid1d } from "../gpu/dispatch.ts";
import type { KernelLaunch, OpDef } from "../graph/op.ts";
import { formatShape, sameShape, type Tensor } from "../graph/tensor.ts";
import { sumTo } from "./broadcast.ts";
import { checkLastAxisInput, rowLaunch } from "./row_launch.ts";
import { layerNormRef, rmsNormRef } from "../reference/layernorm.ts";

/** The normalizations: LayerNorm (centered, with bias) and RMSNorm (neither). */
export type NormKind = "layer_norm" | "rms_norm";

/** Attributes of the normalization ops. */
export interface NormAttrs {
  /** Added to the variance (LayerNorm) or the mean square (RMSNorm) before the rsqrt. */
  eps: number;
  /** Added to the weight where it scales (Gemma's RMSNorm scales by 1 + weight); default 0. */
  weightOffset?: number;
}

/** Throws unless `t` is an f32 tensor of `shape`, the `role` operand of op `op` applied to x. */
function checkOperand(
  op: string,
  x: Tensor,
  role: string,
  t: Tensor,
  shape: readonly number[],
): void {
  if (t.dtype !== "f32" || !sameShape(t.shape, shape)) {
    throw new Error(
      `Cannot apply "${op}" to ${x}: expected an f32 ${role} of shape ${
        formatShape(shape)
      }, received ${t}`,
    );
  }
}

/**
 * One launch of `shaders/layernorm.wgsl` entry `entryPoint`: one workgroup per row of x read
 * as [rows, cols]; `buffers` are (x, w, b, g, out), with x's buffer where one is unused.
 */
function normLaunch(
  gpu: GpuContext,
  kind: NormKind,
  entryPoint: "forward" | "backward" | "weight_grad",
  x: Tensor,
  buffers: readonly [GPUBuffer, GPUBuffer, GPUBuffer, GPUBuffer, GPUBuffer],
  { eps, weightOffset = 0 }: NormAttrs,
): KernelLaunch {
  const constants = {
    LAYERNORM: Number(kind === "layer_norm"),
    ...(weightOffset !== 0 ? { WEIGHT_OFFSET: weightOffset } : {}),
  };
  return rowLaunch(gpu, "layernorm", entryPoint, constants, x, buffers, { eps: { f32: eps } });
}

/** Rows per workgroup of `forward_rows`: one SIMD group of a CPU adapter. */
const ROWS_WG = 8;

/**
 * The forward as `shaders/layernorm.wgsl` entry `forward_rows` (x's rows a multiple of 4 long):
 * `normLaunch`'s forward with one invocation per row, four columns per load, no workgroup memory.
 * For CPU adapters, where the tree reductions' barriers switch between SIMD groups: RMSNorm of
 * [32, 576] ~2x and of [2048, 576] 3.5x faster on llvmpipe than `forward` with 32 threads per row.
 */
function rowsLaunch(
  gpu: GpuContext,
  kind: NormKind,
  x: Tensor,
  buffers: readonly [GPUBuffer, GPUBuffer, GPUBuffer, GPUBuffer, GPUBuffer],
  attrs: NormAttrs,
): KernelLaunch {
  const launch = normLaunch(gpu, kind, "forward", x, buffers, attrs);
  return {
    ...launch,
    spec: {
      ...launch.spec,
      entryPoint: "forward_rows",
      constants: { ...launch.spec.constants, WG: ROWS_WG },
    },
    workgroups: grid1d(Math.ceil(x.size / x.lastDim / ROWS_WG)),
  };
}

/**
 * The forward of normalization `kind` of x (`tensor`'s shape) into `out`: buffers x, weight and
 * (LayerNorm) bias; one invocation per row on CPU adapters where rows are a multiple of 4 long.
 */
export function normForwardLaunch(
  gpu: GpuContext,
  kind: NormKind,
  tensor: Tensor,
  [x, w, b]: readonly [GPUBuffer, GPUBuffer, GPUBuffer | undefined],
  out: GPUBuffer,
  attrs: NormAttrs,
): KernelLaunch {
  const buffers = [x, w, b ?? x, x, out] as const;
  if (gpu.summary.isFallback && tensor.lastDim % 4 === 0) {
    return rowsLaunch(gpu, kind, tensor, buffers, attrs);
  }
  return normLaunch(gpu, kind, "forward", tensor, buffers, attrs);
}

/**
 * The non-differentiable gradient op computed by entry `entryPoint` from inputs (x, w, dy):
 * `backward` gives dx, `weight_grad` gives dy * xhat (dw before the sum over rows).
 */
function gradOp(kind: NormKind, entryPoint: "backward" | "weight_grad"): OpDef<NormAttrs> {
  const name = `${kind}_${entryPoint}`;
  return {
    name,
    output([x, w, g]) {
      checkLastAxisInput(name, x);
      checkOperand(name, x, "weight", w, [x.lastDim]);
      checkOperand(name, x, "gradient", g, x.shape);
      return { shape: x.shape, dtype: "f32" };
    },
    launch(ctx, [x, w, g], out, attrs) {
      const buffers = [x.buffer, w.buffer, x.buffer, g.buffer, out.buffer] as const;
      return [normLaunch(ctx.gpu, kind, entryPoint, x.tensor, buffers, attrs)];
    },
  };
}

/** The forward op of `kind`: inputs (x, weight) for RMSNorm, (x, weight, bias) for LayerNorm. */
function normOp(kind: NormKind): OpDef<NormAttrs> {
  const layer = kind === "layer_norm";
  const backwardOp = gradOp(kind, "backward");
  const weightGradOp = gradOp(kind, "weight_grad");
  return {
    name: kind,
    output([x, w, b]) {
      checkLastAxisInput(kind, x);
      checkOperand(kind, x, "weight", w, [x.lastDim]);
      if (layer) checkOperand(kind, x, "bias", b, [x.lastDim]);
      return { shape: x.shape, dtype: "f32" };
    },
    launch(ctx, [x, w, b], out, attrs) {
      return [
        normForwardLaunch(
          ctx.gpu,
          kind,
          x.tensor,
          [x.buffer, w.buffer, b?.buffer],
          out.buffer,
          attrs,
        ),
      ];
    },
    reference: ([x, w, b], [xt], { eps, weightOffset = 0 }) =>
      layer
        ? layerNormRef(x, w, b, xt.lastDim, eps)
        : rmsNormRef(x, w, xt.lastDim, eps, weightOffset),
    backward(grad, [x, w, b], _out, attrs) {
      const dx = x.graph.apply(backwardOp, [x, w, grad], attrs);
      const dw = sumTo(x.graph.apply(weightGradOp, [x, w, grad], attrs), w.shape);
      return layer ? [dx, dw, sumTo(grad, b.shape)] : [dx, dw];
    },
  };
}

const OPS: Record<NormKind, OpDef<NormAttrs>> = {
  layer_norm: normOp("layer_norm"),
  rms_norm: normOp("rms_norm"),
};

/**
 * Applies normalization `kind` over the last axis of `inputs[0]`: inputs are (x, weight) for
 * RMSNorm and (x, weight, bias) for LayerNorm. Throws unless `eps` and the weight offset are
 * finite and eps >= 0.
 */
export function applyNorm(kind: NormKind, inputs: readonly Tensor[], attrs: NormAttrs): Tensor {
  const x = inputs[0];
  const { eps, weightOffset = 0 } = attrs;
  if (!Number.isFinite(eps) || eps < 0 || !Number.isFinite(weightOffset)) {
    throw new Error(
      `Cannot apply "${kind}" to ${x}: expected a finite eps >= 0 and weight offset, received ${eps} and ${weightOffset}`,
    );
  }
  return x.graph.apply(OPS[kind], inputs, attrs);
}

/**
 * LayerNorm over the last axis (torch.nn.LayerNorm, GPT-2's ln_1/ln_2/ln_f):
 * `(x - mean) / sqrt(var + eps) * weight + bias` per row, with the biased variance computed in
 * two passes. `weight` and `bias` have shape [C], C = x's last dimension; a row of one element
 * gives `bias`. Differentiable in x, weight and bias.
 */
export function layerNorm(x: Tensor, weight: Tensor, bias: Tensor, eps: number): Tensor {
  return applyNorm("layer_norm", [x, weight, bias], { eps });
}
