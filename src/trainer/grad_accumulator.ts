/**
 * Gradient accumulation over micro-batches: one zero-initialised f32 buffer per parameter, a
 * gradient sink through which autodiff adds each gradient term into it in place as it makes the
 * term (the launch of `shaders/gradient_sum.wgsl` from graph/gradient_sum.ts), and a GPU-side
 * reset after the optimizer update has read the sums. Nothing is read back.
 *
 * Fused where the gradient allows, each saving a pass over the parameter per micro-batch: a
 * gradient that is a matmul's product (a weight's: dW = X^T dY) is added by the matmul's own
 * stores, an embedding's table gradient by its scatter (touching only the rows of the batch's
 * ids), and a sum autodiff made of several such terms (a tied embedding: LM head + lookup) is
 * added term by term instead of summed first. Only gradients nothing else reads are fused.
 */

import type { GpuContext } from "../gpu/device.ts";
import { orderAfter } from "../graph/checkpoint.ts";
import { accumulateLaunch, gradientSumTerms } from "../graph/gradient_sum.ts";
import type { GradientSink, OpDef } from "../graph/op.ts";
import { sameShape, type Tensor, type Variable } from "../graph/tensor.ts";
import { accumulateEmbeddingGradient } from "../ops/embedding.ts";
import { accumulateMatmulProduct } from "../ops/matmul.ts";
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

/** Whether no op of `t`'s graph reads `t`, except `reader` when given. */
function readOnlyBy(t: Tensor, reader?: Tensor): boolean {
  return t.graph.nodes.every((n) =>
    n === reader || n.source.kind !== "op" || !n.source.inputs.includes(t)
  );
}

/**
 * The terms of gradient `g` with the node that reads each: the leaves of the autodiff sums that
 * make `g` and that nothing else reads, or `g` itself.
 */
function summands(g: Tensor, reader?: Tensor): { term: Tensor; reader?: Tensor }[] {
  const terms = gradientSumTerms(g);
  if (!terms || !readOnlyBy(g, reader)) return [{ term: g, reader }];
  return terms.flatMap((t) => summands(t, g));
}

/** `sum + term` as one in-place op: fused into the op that made `term` where it can be. */
function addTerm(sum: Tensor, term: Tensor, reader?: Tensor): Tensor {
  const fused = readOnlyBy(term, reader)
    ? accumulateMatmulProduct(sum, term) ?? accumulateEmbeddingGradient(sum, term)
    : undefined;
  return fused ?? sum.graph.apply(ACCUMULATE, [sum, term], null);
}

/** The label of a parameter's gradient sum is the parameter's name and this. */
export const GRAD_SUM_SUFFIX = ".grad_sum";

/** Sums of gradients, one per parameter of `params`, held on the GPU between runs. */
export class GradAccumulator {
  readonly #gpu: GpuContext;
  /** The accumulators, in the order of the parameters. */
  readonly sums: readonly Variable[];

  constructor(gpu: GpuContext, params: readonly Variable[]) {
    this.#gpu = gpu;
    this.sums = params.map((p) => zeroVariable(gpu, `${p.name}${GRAD_SUM_SUFFIX}`, p.shape));
  }

  /**
   * A gradient sink for autodiff (`grad(loss, params, seed, sink)`) over `params`, the graph
   * tensors of this accumulator's parameters in its order: each gradient term is added into its
   * parameter's sum as autodiff makes it (fused into the op that computes it where it can be),
   * so no summed gradient is held. `results()` gives the in-place results to make outputs of
   * the compiled graph, one per parameter.
   */
  sink(params: readonly Tensor[]): GradientSink & { results(): Tensor[] } {
    if (params.length !== this.sums.length) {
      throw new Error(
        `Cannot accumulate gradients: expected ${this.sums.length} parameters, received ${params.length}`,
      );
    }
    const graph = params[0].graph;
    const running = new Map(params.map((p, i) => [p, graph.variable(this.sums[i])]));
    // Every addition waits for the one made before it (autodiff's order): a schedule that walks
    // one parameter's sums then adds the terms of the others as it passes them. Without it, the
    // sums of a head in several pieces were walked one piece at a time, holding the gradient of
    // the logits of every other piece of every chunk (at 0.5B, 8 x 192 tokens: ~0.7 GiB).
    let latest: Tensor | undefined;
    return {
      takes: (t) => running.has(t),
      add(t, term, after = []) {
        const sum = summands(term).reduce(
          (acc, { term, reader }) => addTerm(acc, term, reader),
          orderAfter(running.get(t)!, latest ? [...after, latest] : after),
        );
        running.set(t, sum);
        latest = sum;
        return sum;
      },
      results: () => params.map((p) => running.get(p)!),
    };
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
