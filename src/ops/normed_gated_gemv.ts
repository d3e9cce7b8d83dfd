/**
 * The input of a Llama MLP's down product at one token row in one pass: `f(x @ Wg^T) *
 * (x @ Wu^T)` with x = HF's RMSNorm of h, where a batch-1 decode step ran a norm, two gemv
 * products and the gated activation (four dispatches; on llvmpipe each ~40-70 us of dispatch cost
 * besides its work, the four ~1.2-1.3x the one's time at 1 x 576 -> 1536). On CPU adapters the
 * weights are read from the packed textures the gemv and the texture products share
 * (`packed_weight.ts`, no memory of its own); on GPUs from their buffers by the GEMV kernels
 * (`gemv.ts`, up to 8 rows), f32 or bf16 / f16 as stored. Inference only (not differentiable); {@link normedGatedGemvMisfit}
 * says where it runs.
 * Shader: shaders/normed_gated_gemv.wgsl
 * Reference: src/reference/normed_gated_gemv.ts
 * Test: tests/ops/normed_gated_gemv_test.ts
 */

import type { GpuContext } from "../gpu/device.ts";
import { packParams } from "../gpu/kernel_params.ts";
import type { OpDef } from "../graph/op.ts";
import { formatShape, isHalf, sameShape, type Tensor } from "../graph/tensor.ts";
import { normedGatedGemvRef } from "../reference/normed_gated_gemv.ts";
import type { GateKind } from "./gated.ts";
import { textureWidth } from "./operand_texture.ts";
import { PACKED_STRIP_COLUMNS, packedMisfit, packedWeightTexture } from "./packed_weight.ts";
import { UNARY_OPS } from "./unary.ts";
import { GEMV_MAX_ROWS, gemvLaunch, gemvMisfit } from "./gemv.ts";
import type { WeightFormat } from "./weight_format.ts";

/**
 * Attributes of {@link normedGatedGemv}: the norm's eps and weight offset (Gemma's 1 + gamma;
 * default 0) and the gate's activation.
 */
export interface NormedGatedAttrs {
  eps: number;
  weightOffset?: number;
  gate: GateKind;
}

/** Strips of 32 columns per workgroup (of each weight; `STRIPS` in the shader). */
const STRIPS_PER_WORKGROUP = 4;

/** GEMV columns per workgroup on GPUs. */
const GPU_COLUMNS = 4;

/**
 * Why {@link normedGatedGemv} cannot run with weights [n, k] stored in `format` on `gpu`, or
 * undefined: on GPUs the GEMV kernels' limits (k a multiple of 4, of 8 for halves); on CPU
 * adapters it reads storage textures of f32 weights, four values at a time (k and n multiples of
 * 4), and both weights packed.
 */
export function normedGatedGemvMisfit(
  gpu: GpuContext,
  n: number,
  k: number,
  format: WeightFormat = "f32",
): string | undefined {
  if (!gpu.summary.isFallback) {
    return gemvMisfit(gpu, { m: 1, n, k, format }, { cols: GPU_COLUMNS });
  }
  if (format !== "f32") return `expected f32 weights on a CPU adapter, received ${format}`;
  if (!gpu.readsStorageTextures) return "expected an adapter that reads storage textures";
  if (n % 4 !== 0 || k % 4 !== 0) {
    return `expected weights of a multiple of 4 in both dims, received [${n}, ${k}]`;
  }
  return packedMisfit(gpu, { n, k, transB: true });
}

/** Throws unless h, gamma, gate and up make the op; returns its output shape. */
function checkOperands([h, gamma, gate, up]: readonly Tensor[]): number[] {
  const what = `Cannot apply normed_gated_gemv to ${h}, ${gamma}, ${gate}, ${up}`;
  const weightDtype = gate.dtype === "f32" || isHalf(gate.dtype);
  if (h.dtype !== "f32" || gamma.dtype !== "f32" || !weightDtype || up.dtype !== gate.dtype) {
    throw new Error(`${what}: expected f32 rows and norm weight, f32 or bf16 / f16 weights`);
  }
  const k = h.lastDim;
  const n = gate.shape[0];
  if (gate.shape.length !== 2 || gate.shape[1] !== k || !sameShape(up.shape, gate.shape)) {
    throw new Error(`${what}: expected gate and up weights of shape [N, ${k}]`);
  }
  if (!sameShape(gamma.shape, [k])) {
    throw new Error(`${what}: expected the norm's weight of shape ${formatShape([k])}`);
  }
  if (k % 4 !== 0 || n % 4 !== 0) {
    throw new Error(`${what}: expected K and N multiples of 4, received K ${k}, N ${n}`);
  }
  return [...h.shape.slice(0, -1), n];
}

const NORMED_GATED_GEMV: OpDef<NormedGatedAttrs> = {
  name: "normed_gated_gemv",
  output: (inputs) => ({ shape: checkOperands(inputs), dtype: "f32" }),
  launch(ctx, [h, gamma, gate, up], out, attrs) {
    const [n, k] = gate.tensor.shape;
    const m = h.tensor.size / k;
    if (!ctx.gpu.summary.isFallback) {
      if (m > GEMV_MAX_ROWS) {
        throw new Error(
          `Cannot launch normed_gated_gemv on ${m} rows: GPUs take at most ${GEMV_MAX_ROWS}`,
        );
      }
      const dtype = gate.tensor.dtype;
      const p = { m, n, k, format: isHalf(dtype) ? dtype : "f32" as const };
      const subgroups = !gemvMisfit(ctx.gpu, p, { cols: GPU_COLUMNS, subgroups: true });
      return [
        gemvLaunch(p, { a: h.buffer, w: gate.buffer, c: out.buffer }, {
          cols: GPU_COLUMNS,
          subgroups,
          norm: { gamma: gamma.buffer, eps: attrs.eps, weightOffset: attrs.weightOffset },
          gated: { w2: up.buffer, activation: attrs.gate },
        }),
      ];
    }
    const shape = { n, k, transB: true };
    const packed = [gate, up].map((w, i) =>
      packedWeightTexture(
        ctx,
        w.buffer,
        shape,
        `normed_gated_gemv:${i ? "up" : "gate"}`,
        ctx.isConstantVariable(w.tensor),
      )
    );
    return [...packed.flatMap((p) => p.launches), {
      spec: {
        shader: "normed_gated_gemv",
        entryPoint: "main",
        constants: {
          TEX_W: textureWidth(ctx.gpu),
          OP: UNARY_OPS.indexOf(attrs.gate),
          ...(attrs.weightOffset ? { WEIGHT_OFFSET: attrs.weightOffset } : {}),
        },
        bindings: ["read", "read", "texture", "texture", "read_write"],
        params: true,
      },
      buffers: [h.buffer, gamma.buffer, packed[0].view, packed[1].view, out.buffer],
      params: packParams({ m, n, k, eps: { f32: attrs.eps } }),
      workgroups: [Math.ceil(Math.ceil(n / PACKED_STRIP_COLUMNS) / STRIPS_PER_WORKGROUP), m, 1],
    }];
  },
  reference: ([h, gamma, gate, up], [, , gateT], { eps, weightOffset, gate: kind }) =>
    normedGatedGemvRef(h, gamma, gate, up, {
      n: gateT.shape[0],
      k: gateT.shape[1],
      eps,
      weightOffset,
      kind,
    }),
};

/**
 * `f(rmsNorm(h, gamma, eps, weightOffset) @ gate^T) * (rmsNorm(...) @ up^T)`: h [..., K], gamma [K],
 * the weights [N, K] as HF stores them (bf16 / f16 on GPUs too); out [..., N]. One launch per run (plus the weights'
 * packing when they change), on adapters {@link normedGatedGemvMisfit} accepts.
 *
 * @example
 * ```ts
 * import { Graph } from "../graph/graph.ts";
 * const g = new Graph();
 * const [h, norm] = [g.input([1, 1, 576]), g.input([576])];
 * const [wg, wu] = [g.input([1536, 576]), g.input([1536, 576])];
 * const mlpInput = normedGatedGemv(h, norm, wg, wu, { eps: 1e-5, gate: "silu" });
 * ```
 */
export function normedGatedGemv(
  h: Tensor,
  gamma: Tensor,
  gate: Tensor,
  up: Tensor,
  attrs: NormedGatedAttrs,
): Tensor {
  return h.graph.apply(NORMED_GATED_GEMV, [h, gamma, gate, up], attrs);
}
