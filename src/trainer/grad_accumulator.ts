/**
 * Gradient accumulation over micro-batches: one zero-initialised f32 buffer per parameter, an
 * in-place graph op that adds a micro-batch's gradient into it (the launch of
 * `shaders/gradient_sum.wgsl` from graph/gradient_sum.ts), and a GPU-side reset after the
 * optimizer update has read the sums. A gradient that is a matmul's product read by nothing else
 * (a weight's: dW = X^T dY) is instead added by the matmul itself as it stores
 * (`matmulAccumulate`), saving a pass over every weight per micro-batch. Nothing is read back.
 */

import type { GpuContext } from "../gpu/device.ts";
import { accumulateLaunch } from "../graph/gradient_sum.ts";
import type { OpDef } from "../graph/op.ts";
import { sameShape, type Tensor, type Variable } from "../graph/tensor.ts";
import { matmulAccumulate, matmulOperands } from "../ops/matmul.ts";
import { zeroVariable } from "./adamw.ts";

const ACCUMULATE: OpDef<null> = {
  name: "accumulate",
  inPlace: 0,
  output([acc, grad]) {
    if (acc.dtype !== "f32" || grad.dtype !== "f32" || !sameShape(acc.shape, grad.shape)) {
      throw new Error(
        `Cannot accumulate ${grad} into ${acc}: expected two f32 tensors of one shape`,
      );
    }
    return { shape: acc.shape, dtype: "f32" };
  },
  launch(_ctx, [acc, grad], out) {
    return [accumulateLaunch(grad.buffer, out.buffer, acc.tensor.size)];
  },
};

/** Whether an op of `t`'s graph reads `t`. */
function isRead(t: Tensor): boolean {
  return t.graph.nodes.some((n) => n.source.kind === "op" && n.source.inputs.includes(t));
}

/** Sums of gradients, one per parameter of `params`, held on the GPU between runs. */
export class GradAccumulator {
  readonly #gpu: GpuContext;
  /** The accumulators, in the order of the parameters. */
  readonly sums: readonly Variable[];

  constructor(gpu: GpuContext, params: readonly Variable[]) {
    this.#gpu = gpu;
    this.sums = params.map((p) => zeroVariable(gpu, `${p.name}.grad_sum`, p.shape));
  }

  /**
   * Appends `sums[i] += grads[i]` to the gradients' graph; returns the in-place results, to be
   * made outputs of the compiled graph (rather than `grads`, which may be fused away).
   */
  accumulate(grads: readonly Tensor[]): Tensor[] {
    if (grads.length !== this.sums.length) {
      throw new Error(
        `Cannot accumulate gradients: expected ${this.sums.length}, received ${grads.length}`,
      );
    }
    return grads.map((g, i) => {
      const sum = g.graph.variable(this.sums[i]);
      const product = matmulOperands(g);
      if (product && !isRead(g)) {
        return matmulAccumulate(sum, product.a, product.b, product.options);
      }
      return g.graph.apply(ACCUMULATE, [sum, g], null);
    });
  }

  /** The accumulated sums as tensors of `graph` (read them, e.g., for an optimizer update). */
  read(graph: Tensor["graph"]): Tensor[] {
    return this.sums.map((s) => graph.variable(s));
  }

  /** Sets every sum to zero, on the GPU, after the work already submitted. */
  reset(): void {
    const encoder = this.#gpu.device.createCommandEncoder({ label: "grad_sum:reset" });
    for (const s of this.sums) encoder.clearBuffer(s.buffer);
    this.#gpu.device.queue.submit([encoder.finish()]);
  }

  /** Destroys the accumulators. */
  destroy(): void {
    for (const s of this.sums) s.buffer.destroy();
  }
}
