/** Reshape: a view with new dimensions over the same storage (no kernel, no copy). */

import type { OpDef } from "../graph/op.ts";
import { formatShape, shapeSize, type Tensor } from "../graph/tensor.ts";

const RESHAPE: OpDef<{ shape: readonly number[] }> = {
  name: "reshape",
  aliasOf: 0,
  output([x], { shape }) {
    if (shapeSize(shape) !== x.size) {
      throw new Error(`Cannot reshape ${x} to ${formatShape(shape)}: sizes differ`);
    }
    return { shape, dtype: x.dtype };
  },
  launch() {
    return [];
  },
  backward(grad, [x]) {
    return [reshape(grad, x.shape)];
  },
};

/** `x` viewed with `shape` (same number of elements). */
export function reshape(x: Tensor, shape: readonly number[]): Tensor {
  if (shape.length === x.rank && shape.every((d, i) => d === x.shape[i])) return x;
  return x.graph.apply(RESHAPE, [x], { shape });
}
