/**
 * The linear modules of the graph builders (HF nn.Linear, W stored [out, in], and GPT-2's Conv1D,
 * W stored [in, out]) with their biases and LoRA updates, and the two ways a module's output
 * joins the residual stream: a separate addition (differentiated graphs) or the product's own
 * stores adding in place (inference). Builds graph ops only.
 */

import type { Tensor } from "../graph/tensor.ts";
import { add } from "../ops/binary.ts";
import { matmul, matmulAccumulate } from "../ops/matmul.ts";
import { scale } from "../ops/unary.ts";
import type { ModelConfig } from "./model_config.ts";
import type { LinearSpec } from "./parameters.ts";
import type { LoraWeights, WeightLookup } from "./transformer.ts";

/** A linear module as the builders apply it. */
export interface Projection {
  /** HF name without `.weight`. */
  name: string;
  bias: boolean;
  /** W is stored [out, in] (nn.Linear) rather than [in, out] (Conv1D). */
  transB: boolean;
}

/** Module `m` of a model with config `cfg` as a projection. */
export function projectionOf(cfg: ModelConfig, m: LinearSpec): Projection {
  return { name: m.module, bias: m.bias, transB: !cfg.names.conv1d };
}

/** `x @ op(W) (+ b)` of module `m`, plus its LoRA update when it has one. */
export function project(x: Tensor, w: WeightLookup, m: Projection): Tensor {
  const y = matmul(x, w(`${m.name}.weight`), { transB: m.transB });
  return withLora(x, w, m.name, m.bias ? add(y, w(`${m.name}.bias`)) : y);
}

/**
 * `y + scale * (x A^T) B^T` when `module` has an adapter (PEFT's LoRA forward, the scale on
 * the rank-r product where it costs least), else `y`.
 */
function withLora(x: Tensor, w: WeightLookup, module: string, y: Tensor): Tensor {
  const adapter = w.lora?.(module);
  return adapter ? add(y, matmul(loraDown(x, adapter), adapter.b, { transB: true })) : y;
}

/** `scale * (x A^T)`: an adapter's rank-r projection, scaled where it costs least. */
function loraDown(x: Tensor, adapter: LoraWeights): Tensor {
  return scale(matmul(x, adapter.a, { transB: true }), adapter.scale);
}

/** The residual stream `h` plus module `m`'s output on `x`. */
export type Residual = (h: Tensor, x: Tensor, w: WeightLookup, m: Projection) => Tensor;

/** `h + m(x)` as a separate addition (graphs that are differentiated). */
export const residualAdd: Residual = (h, x, w, m) => add(h, project(x, w, m));

/**
 * `h + m(x)` added in place into `h` by the projection's own stores (and the adapter's), for
 * graphs never differentiated (`BuildOptions.inference`). The only other readers of `h` are
 * the norm that starts the block or the products computing it in their fills, which the
 * projection's input depends on, so they have run.
 */
export const residualInPlace: Residual = (h, x, w, m) => {
  let out = matmulAccumulate(h, x, w(`${m.name}.weight`), { transB: m.transB });
  const adapter = w.lora?.(m.name);
  if (adapter) out = matmulAccumulate(out, loraDown(x, adapter), adapter.b, { transB: true });
  return m.bias ? add(out, w(`${m.name}.bias`)) : out;
};
