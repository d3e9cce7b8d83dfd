/**
 * Gated activations `f(gate) * up` (SwiGLU with SiLU, GeGLU with GELU) in one pass, and their
 * backward in two: the MLPs of Llama-family models without the activation's own tensor and
 * dispatch. f32 only, operands of one shape.
 * Shader: shaders/gated.wgsl
 * Reference: src/reference/elementwise.ts
 * Test: tests/ops/elementwise_test.ts
 */

import { grid1d } from "../gpu/dispatch.ts";
import { packParams } from "../gpu/kernel_params.ts";
import type { KernelLaunch, OpDef } from "../graph/op.ts";
import { formatShape, sameShape, type Tensor } from "../graph/tensor.ts";
import { gatedRef } from "../reference/elementwise.ts";
import { UNARY_OPS, type UnaryKind } from "./unary.ts";

/** The activation of a gated op (every unary function but `affine`). */
export type GateKind = Exclude<UnaryKind, "affine">;

const WG = 256;

/**
 * The launch of entry `entryPoint` over `n` elements: `out` = f(gate) * up (`forward`), or the
 * gate's gradient from `grad` (`backward_gate`).
 */
export function gatedKernelLaunch(
  entryPoint: "forward" | "backward_gate",
  kind: GateKind,
  n: number,
  [gate, up, grad]: readonly GPUBuffer[],
  out: GPUBuffer,
): KernelLaunch {
  // Four elements per invocation, loaded as vec4s, where n allows (llvmpipe: ~25% faster).
  const quads = n % 4 === 0;
  return {
    spec: {
      shader: "gated",
      entryPoint: quads ? `${entryPoint}4` : entryPoint,
      constants: { OP: UNARY_OPS.indexOf(kind), WG },
      bindings: ["read", "read", "read", "read_write"] as const,
      params: true,
    },
    buffers: [gate, up, grad ?? gate, out],
    params: packParams({ n }),
    workgroups: grid1d(Math.ceil((quads ? n / 4 : n) / WG)),
  };
}

function gatedLaunch(entryPoint: "forward" | "backward_gate") {
  return (
    _ctx: unknown,
    inputs: readonly { buffer: GPUBuffer }[],
    out: { buffer: GPUBuffer; tensor: Tensor },
    kind: GateKind,
  ) => [
    gatedKernelLaunch(entryPoint, kind, out.tensor.size, inputs.map((t) => t.buffer), out.buffer),
  ];
}

function checkOperands(name: string, operands: readonly Tensor[]) {
  const [first] = operands;
  for (const t of operands) {
    if (t.dtype !== "f32" || !sameShape(t.shape, first.shape)) {
      throw new Error(
        `Cannot apply "${name}" to ${operands.join(", ")}: expected f32 operands of one shape ${
          formatShape(first.shape)
        }`,
      );
    }
  }
  return { shape: first.shape, dtype: "f32" as const };
}

/** d gate = grad * up * f'(gate), from gate, up and grad. */
const GATED_BACKWARD_GATE: OpDef<GateKind> = {
  name: "gated_backward_gate",
  output: (inputs) => checkOperands("gated_backward_gate", inputs),
  launch: gatedLaunch("backward_gate"),
};

const GATED: OpDef<GateKind> = {
  name: "gated",
  output: (inputs, kind) => checkOperands(`gated ${kind}`, inputs),
  launch: gatedLaunch("forward"),
  reference: ([gate, up], _inputs, kind) => gatedRef(kind, gate, up),
  backward(grad, [gate, up], _out, kind) {
    return [
      gate.graph.apply(GATED_BACKWARD_GATE, [gate, up, grad], kind),
      gated(kind, gate, grad), // d up = grad * f(gate)
    ];
  },
};

/** `f(gate) * up` element-wise, with `f` the unary function `kind`; one dispatch. */
export function gated(kind: GateKind, gate: Tensor, up: Tensor): Tensor {
  return gate.graph.apply(GATED, [gate, up], kind);
}

/** SwiGLU: `silu(gate) * up` (Llama, Qwen, Mistral MLPs). */
export const swiglu = (gate: Tensor, up: Tensor): Tensor => gated("silu", gate, up);
