/**
 * The transformer layers of the exported decoders, written as standard ONNX ops on an
 * `OnnxGraphBuilder` with the math of rft's graph ops (`src/ops/`): HF Linear and Conv1D,
 * RMSNorm, LayerNorm, SiLU and tanh GELU. Values are named strings; nothing is computed here.
 */

import type { OnnxGraphBuilder } from "./onnx_graph_builder.ts";

/** HF nn.Linear: x @ W^T (+ b), W stored [out, in] (the transpose is folded by runtimes). */
export function linear(b: OnnxGraphBuilder, x: string, weight: string, bias?: string): string {
  const y = b.op("MatMul", [x, b.op("Transpose", [weight], { perm: { ints: [1, 0] } })]);
  return bias === undefined ? y : b.op("Add", [y, bias]);
}

/** HF Conv1D (GPT-2): x @ W (+ b), W stored [in, out]. */
export function conv1d(b: OnnxGraphBuilder, x: string, weight: string, bias?: string): string {
  const y = b.op("MatMul", [x, weight]);
  return bias === undefined ? y : b.op("Add", [y, bias]);
}

/** HF LlamaRMSNorm over axis `lastAxis` (the last one): x / sqrt(mean(x^2) + eps) * weight. */
export function rmsNorm(
  b: OnnxGraphBuilder,
  x: string,
  weight: string,
  eps: number,
  lastAxis: number,
): string {
  const meanSquare = b.op("ReduceMean", [b.op("Mul", [x, x])], {
    axes: { ints: [lastAxis] },
    keepdims: { int: 1 },
  });
  const rms = b.op("Sqrt", [b.op("Add", [meanSquare, b.floats([eps], [])])]);
  return b.op("Mul", [b.op("Div", [x, rms]), weight]);
}

/** LayerNorm over the last axis (biased variance), as ONNX LayerNormalization. */
export function layerNorm(
  b: OnnxGraphBuilder,
  x: string,
  weight: string,
  bias: string,
  eps: number,
): string {
  return b.op("LayerNormalization", [x, weight, bias], { epsilon: { float: eps } });
}

/** x * sigmoid(x). */
export function silu(b: OnnxGraphBuilder, x: string): string {
  return b.op("Mul", [x, b.op("Sigmoid", [x])]);
}

/** GPT-2's tanh GELU: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))). */
export function geluTanh(b: OnnxGraphBuilder, x: string): string {
  const cube = b.op("Mul", [b.op("Mul", [x, x]), x]);
  const inner = b.op("Add", [x, b.op("Mul", [cube, b.floats([0.044715], [])])]);
  const t = b.op("Tanh", [b.op("Mul", [inner, b.floats([Math.sqrt(2 / Math.PI)], [])])]);
  const half = b.op("Mul", [x, b.floats([0.5], [])]);
  return b.op("Mul", [half, b.op("Add", [t, b.floats([1], [])])]);
}

/** The MLP activation `kind` of a model description (`silu`, or GELU's tanh form). */
export function activation(b: OnnxGraphBuilder, kind: "silu" | "gelu", x: string): string {
  return kind === "silu" ? silu(b, x) : geluTanh(b, x);
}

/** Reshape to `dims` (0 keeps the input's size on that axis, -1 infers one). */
export function reshape(b: OnnxGraphBuilder, x: string, dims: readonly number[]): string {
  return b.op("Reshape", [x, b.int64s(dims)]);
}
