/**
 * Stop-gradient: the identity in the forward pass (a view over the input's storage, no kernel)
 * and no gradient in the backward pass, like torch's `detach()`. Used where a loss needs a value
 * computed from the policy as a constant (CISPO's IS weight, GSPO's sequence ratio).
 */

import type { OpDef } from "../graph/op.ts";
import type { Tensor } from "../graph/tensor.ts";

const STOP_GRADIENT: OpDef<null> = {
  name: "stop_gradient",
  aliasOf: 0,
  output([x]) {
    return { shape: x.shape, dtype: x.dtype };
  },
  launch() {
    return [];
  },
  backward() {
    return [null];
  },
};

/** `x` in value, a constant to autodiff: no gradient flows back through it. */
export function stopGradient(x: Tensor): Tensor {
  return x.graph.apply(STOP_GRADIENT, [x], null);
}
