/**
 * Products whose A is a function of its producers, computed where the texture variants fill A's
 * texture (a prologue): `rmsNorm(x, w) @ op(B)` and `f(gate) * up @ op(B)` without the norm's or
 * the gated activation's own pass and buffer, nor the copy of that buffer into the texture. For
 * inference graphs on CPU adapters (see {@link fillsTakePrologues}), where those passes cost more
 * than their work: a decode step's RMSNorm of [32, 576] ~75 us, SwiGLU of [32, 1536] ~170 us, and a
 * fill ~37 us more. The q, k and v products of one norm share its texture (one fill). A variant
 * that reads A's buffer (storage, gemv) gets the prologue as its own launch into a scratch buffer.
 * Not differentiable.
 * Shader: shaders/prologue_fill.wgsl
 * Reference: src/reference/prologue_matmul.ts
 * Test: tests/ops/prologue_matmul_test.ts
 */

import type { GpuContext } from "../gpu/device.ts";
import { grid1d } from "../gpu/dispatch.ts";
import { packParams } from "../gpu/kernel_params.ts";
import type { BoundTensor, KernelLaunch, LaunchContext, OpDef } from "../graph/op.ts";
import { formatShape, sameShape, type Tensor } from "../graph/tensor.ts";
import { prologueMatmulRef } from "../reference/prologue_matmul.ts";
import { gatedKernelLaunch, type GateKind } from "./gated.ts";
import { normForwardLaunch } from "./layernorm.ts";
import {
  type MatmulAttrs,
  matmulAttrs,
  type MatmulOptions,
  matmulShapes,
  planMatmul,
} from "./matmul.ts";
import { GEMV_MAX_M, matmulLaunch } from "./matmul_variants.ts";
import type { TexturePrologue } from "./operand_texture.ts";
import { UNARY_OPS } from "./unary.ts";

/**
 * What A is computed as from the op's inputs `x` and `aux`: HF's RMSNorm of x with weight aux
 * ([K]; plus `weightOffset`, Gemma's 1 + weight, default 0), or the gated activation f(x) * aux
 * (x the gate, aux up, of one shape).
 */
export type APrologue =
  | { kind: "rms_norm"; eps: number; weightOffset?: number }
  | { kind: "gated"; gate: GateKind };

/** Attributes of a prologue product: the matmul's, and A's prologue. */
export interface PrologueMatmulAttrs extends MatmulAttrs {
  prologue: APrologue;
}

/**
 * Whether products of `rows` rows of A on `gpu` fill A's texture, so a prologue there saves its
 * pass: on CPU adapters above the rows of the decode gemv (which reads A's buffer). Elsewhere a prologue product computes A in a pass
 * of its own, once per product (three times for q, k and v): build those graphs without them.
 */
export function fillsTakePrologues(gpu: GpuContext, rows: number): boolean {
  return gpu.summary.isFallback && gpu.readsStorageTextures && rows > GEMV_MAX_M;
}

/** Invocations per workgroup of the gated fill; the norm's take a row each, 8 to a workgroup. */
const GATED_WG = 64;
const ROWS_WG = 8;

/** The prologue filling A's texture from x and aux (`cols` a multiple of 4). */
function texturePrologue(
  prologue: APrologue,
  [x, aux]: readonly BoundTensor[],
): TexturePrologue {
  const cols = x.tensor.lastDim;
  const rows = x.tensor.size / cols;
  const rmsNorm = prologue.kind === "rms_norm";
  const offset = rmsNorm ? prologue.weightOffset ?? 0 : 0;
  return {
    layout: rmsNorm
      ? `rms_norm ${prologue.eps}+${offset} of ${aux.tensor.id}`
      : `gated ${prologue.gate} by ${aux.tensor.id}`,
    fill: (view, width) => ({
      spec: {
        shader: "prologue_fill",
        entryPoint: rmsNorm ? "rms_norm_rows" : "gated",
        constants: {
          TEX_W: width,
          WG: rmsNorm ? ROWS_WG : GATED_WG,
          ...(rmsNorm ? {} : { OP: UNARY_OPS.indexOf(prologue.gate) }),
          ...(offset ? { WEIGHT_OFFSET: offset } : {}),
        },
        bindings: ["read", "read", "storage_texture"],
        params: true,
      },
      buffers: [x.buffer, aux.buffer, view],
      params: packParams({ rows, cols, eps: { f32: rmsNorm ? prologue.eps : 0 } }),
      workgroups: grid1d(Math.ceil(rmsNorm ? rows / ROWS_WG : (rows * cols) / 4 / GATED_WG)),
    }),
  };
}

/** The prologue as a pass of its own, from x and aux into `out` (x's shape). */
function prologuePass(
  ctx: LaunchContext,
  prologue: APrologue,
  [x, aux]: readonly BoundTensor[],
  out: GPUBuffer,
): KernelLaunch {
  if (prologue.kind === "rms_norm") {
    const buffers = [x.buffer, aux.buffer, undefined] as const;
    const attrs = { eps: prologue.eps, weightOffset: prologue.weightOffset };
    return normForwardLaunch(ctx.gpu, "rms_norm", x.tensor, buffers, out, attrs);
  }
  return gatedKernelLaunch("forward", prologue.gate, x.tensor.size, [x.buffer, aux.buffer], out);
}

/** The launches of prologue(x, aux) @ op(b) into `out` (added to it when `accumulate`). */
async function launchPrologueMatmul(
  ctx: LaunchContext,
  [x, aux, b]: readonly BoundTensor[],
  out: BoundTensor,
  attrs: PrologueMatmulAttrs,
  accumulate: boolean,
): Promise<KernelLaunch[]> {
  const { problem, variant, constant } = await planMatmul(ctx, [x, b], attrs);
  const p = { ...problem, accumulate };
  if (variant.takesPrologue) {
    const prologue = texturePrologue(attrs.prologue, [x, aux]);
    return matmulLaunch(ctx, variant, p, x.buffer, b.buffer, out.buffer, constant, prologue);
  }
  const a = ctx.scratch(x.tensor.size * 4, "prologue");
  return [
    prologuePass(ctx, attrs.prologue, [x, aux], a),
    ...matmulLaunch(ctx, variant, p, a, b.buffer, out.buffer, { ...constant, a: false }),
  ];
}

/** Throws unless x, aux and b make a prologue product; returns its output shape. */
function checkPrologueMatmul(
  [x, aux, b]: readonly Tensor[],
  attrs: PrologueMatmulAttrs,
): number[] {
  const what = `Cannot multiply ${attrs.prologue.kind}(${x}, ${aux}) by ${b}`;
  if (attrs.transA) throw new Error(`${what}: expected A not transposed`);
  if ([x, aux, b].some((t) => t.dtype !== "f32")) throw new Error(`${what}: expected f32 operands`);
  if (x.lastDim % 4 !== 0) {
    throw new Error(`${what}: expected rows of a multiple of 4, received ${x.lastDim}`);
  }
  const auxShape = attrs.prologue.kind === "rms_norm" ? [x.lastDim] : x.shape;
  if (!sameShape(aux.shape, auxShape)) {
    throw new Error(`${what}: expected the second operand of shape ${formatShape(auxShape)}`);
  }
  const { prologue } = attrs;
  if (prologue.kind === "rms_norm" && !(Number.isFinite(prologue.eps) && prologue.eps >= 0)) {
    throw new Error(`${what}: expected a finite eps >= 0, received ${prologue.eps}`);
  }
  return matmulShapes(x.shape, b.shape, attrs).shape;
}

const PROLOGUE_MATMUL: OpDef<PrologueMatmulAttrs> = {
  name: "prologue_matmul",
  output: (inputs, attrs) => ({ shape: checkPrologueMatmul(inputs, attrs), dtype: "f32" }),
  launch: (ctx, inputs, out, attrs) => launchPrologueMatmul(ctx, inputs, out, attrs, false),
  reference: ([x, aux, b], [xt, , bt], attrs) =>
    prologueMatmulRef(x, aux, b, attrs.prologue, matmulShapes(xt.shape, bt.shape, attrs)),
};

/** `acc += prologue(x, aux) @ op(b)` in place in acc (see {@link prologueMatmulAccumulate}). */
const PROLOGUE_MATMUL_ACCUMULATE: OpDef<PrologueMatmulAttrs> = {
  name: "prologue_matmul_accumulate",
  inPlace: 0,
  output([acc, ...inputs], attrs) {
    const shape = checkPrologueMatmul(inputs, attrs);
    if (acc.dtype !== "f32" || !sameShape(acc.shape, shape)) {
      throw new Error(
        `Cannot accumulate a product into ${acc}: expected an f32 accumulator of shape ${
          formatShape(shape)
        }`,
      );
    }
    return { shape, dtype: "f32" };
  },
  launch: (ctx, [, ...inputs], out, attrs) => launchPrologueMatmul(ctx, inputs, out, attrs, true),
  reference: ([acc, x, aux, b], [, xt, , bt], attrs) => {
    const shapes = matmulShapes(xt.shape, bt.shape, attrs);
    const product = prologueMatmulRef(x, aux, b, attrs.prologue, shapes);
    return Float32Array.from(product, (v, i) => (acc[i] as number) + v);
  },
};

/**
 * `prologue(x, aux) @ op(b)`: with `{kind: "rms_norm", eps}` the product of rmsNorm(x, aux, eps)
 * (aux the norm's weight, [K]), with `{kind: "gated", gate}` that of f(x) * aux (x the gate, aux
 * up); x is [...batch, M, K], K a multiple of 4, b as {@link matmul}'s (never A transposed).
 *
 * @example
 * ```ts
 * import { Graph } from "../graph/graph.ts";
 * const g = new Graph();
 * const [h, norm, wq] = [g.input([32, 1, 576]), g.input([576]), g.input([576, 576])];
 * const q = prologueMatmul(h, norm, wq, { kind: "rms_norm", eps: 1e-5 }, { transB: true });
 * ```
 */
export function prologueMatmul(
  x: Tensor,
  aux: Tensor,
  b: Tensor,
  prologue: APrologue,
  options: MatmulOptions = {},
): Tensor {
  return x.graph.apply(PROLOGUE_MATMUL, [x, aux, b], { ...matmulAttrs(options), prologue });
}

/**
 * `acc += prologue(x, aux) @ op(b)` in one product whose stores add into acc (as
 * `matmulAccumulate`): e.g. a residual stream plus the down projection of a SwiGLU.
 */
export function prologueMatmulAccumulate(
  acc: Tensor,
  x: Tensor,
  aux: Tensor,
  b: Tensor,
  prologue: APrologue,
  options: MatmulOptions = {},
): Tensor {
  const attrs = { ...matmulAttrs(options), prologue };
  return x.graph.apply(PROLOGUE_MATMUL_ACCUMULATE, [acc, x, aux, b], attrs);
}
