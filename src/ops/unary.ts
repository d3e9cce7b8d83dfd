/**
 * Element-wise unary ops (affine, exp, log, sqrt, relu, gelu, silu, sigmoid, tanh, square) and
 * their backward: one kernel computes `g * f'(x)` for each. f32 only.
 * Shader: shaders/unary.wgsl
 * Reference: src/reference/elementwise.ts
 * Test: tests/ops/elementwise_test.ts
 */

import { grid1d } from "../gpu/dispatch.ts";
import { packParams } from "../gpu/kernel_params.ts";
import type { OpDef } from "../graph/op.ts";
import type { Tensor } from "../graph/tensor.ts";
import { unaryRef } from "../reference/elementwise.ts";

/** The unary functions, in the order of the shader's `OP` codes. */
export const UNARY_OPS = [
  "affine",
  "exp",
  "log",
  "sqrt",
  "relu",
  "gelu",
  "silu",
  "sigmoid",
  "tanh",
  "square",
] as const;
/** One of {@link UNARY_OPS}. */
export type UnaryKind = typeof UNARY_OPS[number];

/** Attributes of a unary op: `alpha`, `beta` are used by `affine` only. */
export interface UnaryAttrs {
  kind: UnaryKind;
  alpha: number;
  beta: number;
}

const WG = 256;

function unaryLaunch(entryPoint: "forward" | "backward") {
  return (
    _ctx: unknown,
    inputs: readonly { buffer: GPUBuffer }[],
    out: { buffer: GPUBuffer; tensor: Tensor },
    { kind, alpha, beta }: UnaryAttrs,
  ) => {
    const n = out.tensor.size;
    const x = inputs[0].buffer;
    const g = inputs[1]?.buffer ?? x;
    return [{
      spec: {
        shader: "unary",
        entryPoint,
        constants: { OP: UNARY_OPS.indexOf(kind), WG },
        bindings: ["read", "read", "read_write"] as const,
        params: true,
      },
      buffers: [x, g, out.buffer],
      params: packParams({ n, alpha: { f32: alpha }, beta: { f32: beta } }),
      workgroups: grid1d(Math.ceil(n / WG)),
    }];
  };
}

function checkF32(name: string, inputs: readonly Tensor[]) {
  for (const t of inputs) {
    if (t.dtype !== "f32") throw new Error(`Cannot apply "${name}" to ${t}: only f32 is supported`);
  }
}

const UNARY_BACKWARD: OpDef<UnaryAttrs> = {
  name: "unary_backward",
  output([x, g]) {
    checkF32("unary_backward", [x, g]);
    return { shape: x.shape, dtype: "f32" };
  },
  launch: unaryLaunch("backward"),
};

const UNARY: OpDef<UnaryAttrs> = {
  name: "unary",
  output([x], { kind }) {
    checkF32(kind, [x]);
    return { shape: x.shape, dtype: "f32" };
  },
  launch: unaryLaunch("forward"),
  reference: ([x], _inputs, { kind, alpha, beta }) => unaryRef(kind, x, alpha, beta),
  backward(grad, [x], _out, attrs) {
    if (attrs.kind === "affine") return [unary("affine", grad, attrs.alpha, 0)];
    return [x.graph.apply(UNARY_BACKWARD, [x, grad], attrs)];
  },
};

/** Applies unary function `kind` element-wise (`alpha`, `beta` only matter for `affine`). */
export function unary(kind: UnaryKind, x: Tensor, alpha = 1, beta = 0): Tensor {
  return x.graph.apply(UNARY, [x], { kind, alpha, beta });
}

/** `alpha * x + beta`. */
export const affine = (x: Tensor, alpha: number, beta = 0): Tensor =>
  unary("affine", x, alpha, beta);
/** `s * x`. */
export const scale = (x: Tensor, s: number): Tensor => unary("affine", x, s, 0);
/** `-x`. */
export const neg = (x: Tensor): Tensor => unary("affine", x, -1, 0);
/** `e^x`. */
export const exp = (x: Tensor): Tensor => unary("exp", x);
/** Natural log. */
export const log = (x: Tensor): Tensor => unary("log", x);
/** Square root. */
export const sqrt = (x: Tensor): Tensor => unary("sqrt", x);
/** `max(x, 0)`. */
export const relu = (x: Tensor): Tensor => unary("relu", x);
/** GELU, tanh approximation (GPT-2's `gelu_new`). */
export const gelu = (x: Tensor): Tensor => unary("gelu", x);
/** SiLU / swish: `x * sigmoid(x)`. */
export const silu = (x: Tensor): Tensor => unary("silu", x);
/** Logistic sigmoid. */
export const sigmoid = (x: Tensor): Tensor => unary("sigmoid", x);
/** Hyperbolic tangent. */
export const tanh = (x: Tensor): Tensor => unary("tanh", x);
/** `x * x`. */
export const square = (x: Tensor): Tensor => unary("square", x);
