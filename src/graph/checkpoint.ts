/**
 * Recomputation (activation checkpointing). `checkpoint(graph, body)` builds `body` once for the
 * forward pass and marks its result: autodiff does not differentiate through those nodes but
 * replays the body's ops from the tensors it read (its captured inputs), after the gradient of
 * its result exists, and differentiates the replay. The tensors the body makes then live during
 * its forward and again during its own backward only, instead of from the forward to the end of
 * the backward; what is kept is what it read (for a decoder layer: the layer's input).
 *
 * Ordering is by data: the replay reads its captured activations through `orderAfter` views that
 * also depend on the result's gradient, so the schedule cannot run it early; and every gradient
 * the region gives out waits for the others (weights' and activations' alike), so whichever of
 * them the schedule reaches first, the whole region's backward runs then and its replayed tensors
 * die with it. Variables and constants are read as they are.
 */

import { backpropagate } from "./autodiff.ts";
import type { BackwardContext, OpDef } from "./op.ts";
import { inputsOf } from "./schedule.ts";
import type { Graph } from "./graph.ts";
import type { Tensor } from "./tensor.ts";

/** `x` itself, scheduled after every tensor of `after` (a view: no kernel, no copy). */
const ORDER_AFTER: OpDef<null> = {
  name: "order_after",
  aliasOf: 0,
  output([x]) {
    return { shape: x.shape, dtype: x.dtype };
  },
  launch() {
    return [];
  },
  backward(g, inputs) {
    return [g, ...inputs.slice(1).map(() => null)];
  },
};

/** `x` as a view that the schedule places after every tensor of `after` (none: `x`). */
export function orderAfter(x: Tensor, after: readonly Tensor[]): Tensor {
  return after.length === 0 ? x : x.graph.apply(ORDER_AFTER, [x, ...after], null);
}

/** The body of a checkpointed region: its op nodes in creation order and its result. */
interface Region {
  ops: readonly Tensor[];
  result: Tensor;
}

/** Whether a region reads `t` as it is (never written, always there) rather than by order. */
function readAsIs(t: Tensor): boolean {
  return t.source.kind === "variable" || t.source.kind === "constant";
}

/** Whether autodiff can give `t` a gradient (f32 data). */
const differentiable = (t: Tensor) => t.dtype === "f32";

const CHECKPOINT: OpDef<Region> = {
  name: "checkpoint",
  aliasOf: 0,
  output([result]) {
    return { shape: result.shape, dtype: result.dtype };
  },
  launch() {
    return [];
  },
  backward(g, [, ...captured], _out, region, context?: BackwardContext) {
    const replayed = replay(region, captured, g);
    const wrt = new Set(captured.map((t) => replayed.get(t)!).filter(differentiable));
    const grads = backpropagate(
      region.ops.map((n) => replayed.get(n)!),
      replayed.get(region.result)!,
      g,
      wrt,
    );
    const gradOf = captured.map((t) => grads.get(replayed.get(t)!) ?? null);
    return [null, ...regionGradients(captured, gradOf, context)];
  },
};

/**
 * The region's ops applied again to its captured tensors (activations read through views after
 * `g`), by original tensor: each captured tensor maps to what the replay reads, each op node to
 * its replay.
 */
function replay(region: Region, captured: readonly Tensor[], g: Tensor): Map<Tensor, Tensor> {
  const replayed = new Map<Tensor, Tensor>();
  for (const t of captured) replayed.set(t, readAsIs(t) ? t : orderAfter(t, [g]));
  for (const node of region.ops) {
    if (node.source.kind !== "op") continue;
    const { op, inputs, attrs } = node.source;
    replayed.set(node, g.graph.apply(op, inputs.map((t) => replayed.get(t)!), attrs));
  }
  return replayed;
}

/**
 * The gradients a region gives its captured tensors, each ordered after all the others (see
 * the file comment); the terms of tensors the sink takes go to the sink (ordered after the
 * activations' gradients), and the activations' gradients wait for those.
 */
function regionGradients(
  captured: readonly Tensor[],
  gradOf: readonly (Tensor | null)[],
  context: BackwardContext | undefined,
): (Tensor | null)[] {
  const sink = context?.sink;
  const sunk = captured.map((t, i) => Boolean(gradOf[i] && sink?.takes(t)));
  const passed = gradOf.filter((t, i): t is Tensor => t !== null && !sunk[i]);
  const added = captured.flatMap((t, i) => sunk[i] ? [sink!.add(t, gradOf[i]!, passed)] : []);
  const all = [...passed, ...added];
  return gradOf.map((t, i) => {
    if (t === null || sunk[i]) return null;
    return orderAfter(t, all.filter((other) => other !== t));
  });
}

/**
 * `body()` built into `graph` as a checkpointed region (see the file comment): the same values,
 * with its inner tensors recomputed for the backward pass instead of kept. Regions do not nest,
 * and may not update anything in place.
 */
export function checkpoint(graph: Graph, body: () => Tensor): Tensor {
  const start = graph.nodes.length;
  const result = body();
  if (result.id < start || result.source.kind !== "op") return result;
  // The ops made here that the result needs, in creation order, and what they read from outside
  // (variables bound for the first time inside included).
  const made = new Set(graph.nodes.slice(start).filter((n) => n.source.kind === "op"));
  const needed = new Set<Tensor>([result]);
  for (let i = graph.nodes.length - 1; i >= start; i--) {
    const node = graph.nodes[i];
    if (needed.has(node)) { for (const t of inputsOf(node)) if (made.has(t)) needed.add(t); }
  }
  const ops = graph.nodes.slice(start).filter((n) => needed.has(n));
  const captured = new Set<Tensor>();
  for (const node of ops) {
    const { op } = node.source as { op: OpDef<unknown> };
    if (op === CHECKPOINT || op.inPlace !== undefined || op.writes?.length) {
      throw new Error(`Cannot checkpoint a region holding op "${op.name}" (${node})`);
    }
    for (const t of inputsOf(node)) if (!needed.has(t)) captured.add(t);
  }
  return graph.apply(CHECKPOINT, [result, ...captured], { ops, result });
}
