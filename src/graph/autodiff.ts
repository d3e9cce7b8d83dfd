/**
 * Reverse-mode autodiff over a graph: walks the nodes between the wrt tensors and the output in
 * reverse order, asks each op for its input gradients (as new graph ops) and sums gradients
 * that meet (`gradient_sum.ts`). The backward pass is derived from the ops, never assembled by
 * hand. A `GradientSink` may take the gradient terms of some tensors as they are made (e.g. to
 * add each into an accumulator in place) instead of their sum.
 */

import { gradientSum } from "./gradient_sum.ts";
import type { GradientSink } from "./op.ts";
import { inputsOf, schedule } from "./schedule.ts";
import { formatShape, sameShape, type Tensor } from "./tensor.ts";

/**
 * Gradients flowing back from `output` (seeded with `seed`) through `order` (nodes in schedule
 * order: each after its inputs; `output` among them), by tensor: every tensor of `wrt` that the
 * output depends on, and the nodes between. Terms for tensors the sink takes go to the sink.
 */
export function backpropagate(
  order: readonly Tensor[],
  output: Tensor,
  seed: Tensor,
  wrt: ReadonlySet<Tensor>,
  sink?: GradientSink,
): Map<Tensor, Tensor> {
  const needsGrad = new Set<Tensor>(wrt);
  for (const node of order) {
    if (inputsOf(node).some((t) => needsGrad.has(t))) needsGrad.add(node);
  }
  const grads = new Map<Tensor, Tensor>([[output, seed]]);
  for (let i = order.length - 1; i >= 0; i--) {
    const node = order[i];
    const g = grads.get(node);
    const source = node.source;
    if (!g || source.kind !== "op" || !needsGrad.has(node)) continue;
    if (!source.op.backward) {
      throw new Error(`Cannot differentiate through op "${source.op.name}" (${node}): no backward`);
    }
    const inputGrads = source.op.backward(g, source.inputs, node, source.attrs, { sink });
    source.inputs.forEach((input, k) => {
      const gi = inputGrads[k];
      if (!gi || !needsGrad.has(input)) return;
      if (!sameShape(gi.shape, input.shape)) {
        throw new Error(
          `Backward of op "${source.op.name}" gave input ${k} a gradient of shape ${
            formatShape(gi.shape)
          }, expected ${formatShape(input.shape)}`,
        );
      }
      if (sink?.takes(input)) {
        grads.set(input, sink.add(input, gi));
        return;
      }
      const prev = grads.get(input);
      grads.set(input, prev ? gradientSum(prev, gi) : gi);
    });
  }
  return grads;
}

/**
 * Gradients of `output` with respect to each tensor of `wrt` (a vector-Jacobian product with
 * `seed`, which defaults to ones: the gradient of `sum(output)`). A wrt tensor the output does
 * not depend on gets zeros. With a `sink`, a tensor it takes gets the sink's last result.
 */
export function grad(
  output: Tensor,
  wrt: readonly Tensor[],
  seed?: Tensor,
  sink?: GradientSink,
): Tensor[] {
  const graph = output.graph;
  if (seed && !sameShape(seed.shape, output.shape)) {
    throw new Error(
      `Cannot differentiate ${output}: seed shape ${formatShape(seed.shape)} differs`,
    );
  }
  const grads = backpropagate(
    schedule([output]),
    output,
    seed ?? graph.constant(new Float32Array(output.size).fill(1), output.shape, "ones"),
    new Set(wrt),
    sink,
  );
  return wrt.map((w) =>
    grads.get(w) ?? graph.constant(new Float32Array(w.size), w.shape, `zero_grad_${w.name}`)
  );
}
