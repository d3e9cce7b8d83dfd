/**
 * The sum autodiff uses where gradients of one tensor meet: `a + b` for two f32 tensors of one
 * shape, as a copy of `a` into the output followed by `shaders/gradient_sum.wgsl` adding `b` into
 * it. Part of the graph runtime, so autodiff needs no op of the layer above; not a general add
 * (no broadcasting: see `ops/binary.ts`). Its backward passes the gradient to both inputs.
 * Shader: shaders/gradient_sum.wgsl
 * Reference: src/reference/elementwise.ts
 * Test: tests/graph/gradient_sum_test.ts
 */

import { grid1d } from "../gpu/dispatch.ts";
import { packParams } from "../gpu/kernel_params.ts";
import type { KernelLaunch, OpDef } from "./op.ts";
import { formatShape, sameShape, type Tensor } from "./tensor.ts";

const WG = 256;

const GRADIENT_SUM: OpDef<null> = {
  name: "gradient_sum",
  output([a, b]) {
    if (a.dtype !== "f32" || b.dtype !== "f32" || !sameShape(a.shape, b.shape)) {
      throw new Error(
        `Cannot sum gradients ${a} and ${b}: expected two f32 tensors of one shape, found ${
          formatShape(a.shape)
        } and ${formatShape(b.shape)}`,
      );
    }
    return { shape: a.shape, dtype: "f32" };
  },
  launch(_ctx, [a, b], out) {
    const n = out.tensor.size;
    return [{
      ...accumulateLaunch(b.buffer, out.buffer, n),
      before: (encoder) => encoder.copyBufferToBuffer(a.buffer, 0, out.buffer, 0, n * 4),
    }];
  },
  backward(g) {
    return [g, g];
  },
};

/** The launch of `shaders/gradient_sum.wgsl`: `acc[i] += grad[i]` for the first `n` elements. */
export function accumulateLaunch(grad: GPUBuffer, acc: GPUBuffer, n: number): KernelLaunch {
  return {
    spec: {
      shader: "gradient_sum",
      entryPoint: "main",
      constants: { WG },
      bindings: ["read", "read_write"],
      params: true,
    },
    buffers: [grad, acc],
    params: packParams({ n }),
    workgroups: grid1d(Math.ceil(n / WG)),
  };
}

/** `a + b` where two gradients of one tensor meet (see the file comment). */
export function gradientSum(a: Tensor, b: Tensor): Tensor {
  return a.graph.apply(GRADIENT_SUM, [a, b], null);
}

/** The two gradients autodiff summed into `t` when {@link gradientSum} made it, else undefined. */
export function gradientSumTerms(t: Tensor): readonly [Tensor, Tensor] | undefined {
  if (t.source.kind !== "op" || t.source.op !== GRADIENT_SUM) return undefined;
  const [a, b] = t.source.inputs;
  return [a, b];
}
