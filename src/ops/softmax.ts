/**
 * Softmax and log-softmax over the last axis (numerically stable: the row max is subtracted
 * before exp), and their backward, a separate non-differentiable op computed from the forward
 * output and its gradient. f32 only; other axes are not supported (reshape or transpose first).
 * Shader: shaders/softmax.wgsl
 * Reference: src/reference/softmax.ts
 * Test: tests/ops/softmax_test.ts
 */

import type { OpDef } from "../graph/op.ts";
import { formatShape, sameShape, type Tensor } from "../graph/tensor.ts";
import { checkLastAxisInput, rowLaunch } from "./row_launch.ts";
import { logSoftmaxRef, softmaxRef } from "../reference/softmax.ts";

/** The forward op (`log` selects log-softmax) with its backward op, sharing one shader. */
function softmaxOp(log: boolean): OpDef<null> {
  const name = log ? "log_softmax" : "softmax";
  const constants = { LOG: Number(log) };
  const backwardOp: OpDef<null> = {
    name: `${name}_backward`,
    output([y, g]) {
      checkLastAxisInput(`${name}_backward`, y);
      if (g.dtype !== "f32" || !sameShape(g.shape, y.shape)) {
        throw new Error(
          `Cannot apply "${name}_backward" to ${y}: expected an f32 gradient of shape ${
            formatShape(y.shape)
          }, received ${g}`,
        );
      }
      return { shape: y.shape, dtype: "f32" };
    },
    launch(ctx, [y, g], out) {
      return [
        rowLaunch(ctx.gpu, "softmax", "backward", constants, y.tensor, [
          y.buffer,
          g.buffer,
          out.buffer,
        ]),
      ];
    },
  };
  return {
    name,
    output([x]) {
      checkLastAxisInput(name, x);
      return { shape: x.shape, dtype: "f32" };
    },
    launch(ctx, [x], out) {
      return [
        rowLaunch(ctx.gpu, "softmax", "forward", constants, x.tensor, [
          x.buffer,
          x.buffer,
          out.buffer,
        ]),
      ];
    },
    reference: ([x], [xt]) => (log ? logSoftmaxRef : softmaxRef)(x, xt.lastDim),
    backward(grad, _inputs, out) {
      return [out.graph.apply(backwardOp, [out, grad], null)];
    },
  };
}

const SOFTMAX = softmaxOp(false);
const LOG_SOFTMAX = softmaxOp(true);

/** Softmax over the last axis: `exp(x - max) / sum(exp(x - max))` per row. */
export function softmax(x: Tensor): Tensor {
  return x.graph.apply(SOFTMAX, [x], null);
}

/** Log-softmax over the last axis: `x - max - log(sum(exp(x - max)))` per row. */
export function logSoftmax(x: Tensor): Tensor {
  return x.graph.apply(LOG_SOFTMAX, [x], null);
}
