/**
 * Orders the nodes a set of outputs needs so every node comes after its inputs (depth-first
 * post-order, iterative so deep graphs do not exhaust the stack). Unneeded nodes are left out.
 */

import type { Tensor } from "./tensor.ts";

/** The inputs of a tensor (empty for leaves). */
export function inputsOf(t: Tensor): readonly Tensor[] {
  return t.source.kind === "op" ? t.source.inputs : [];
}

/** Nodes needed by `outputs`, each after its inputs. */
export function schedule(outputs: readonly Tensor[]): Tensor[] {
  const order: Tensor[] = [];
  const done = new Set<Tensor>();
  const onStack = new Set<Tensor>();
  for (const root of outputs) {
    const stack: { node: Tensor; next: number }[] = [{ node: root, next: 0 }];
    while (stack.length) {
      const top = stack[stack.length - 1];
      if (done.has(top.node)) {
        stack.pop();
        continue;
      }
      onStack.add(top.node);
      const inputs = inputsOf(top.node);
      if (top.next < inputs.length) {
        const child = inputs[top.next++];
        if (!done.has(child)) {
          if (onStack.has(child)) throw new Error(`Cannot schedule graph: cycle at ${child}`);
          stack.push({ node: child, next: 0 });
        }
      } else {
        stack.pop();
        onStack.delete(top.node);
        done.add(top.node);
        order.push(top.node);
      }
    }
  }
  return order;
}
