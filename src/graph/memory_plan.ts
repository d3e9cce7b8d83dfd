/**
 * Assigns storage to the nodes of a scheduled graph. Op results that are not outputs share
 * slots once their last reader has run (liveness); views share their input's slot; inputs,
 * constants and outputs get slots of their own. Variables bring their own buffers.
 */

import { inputsOf } from "./schedule.ts";
import type { Tensor } from "./tensor.ts";

/** Storage assignment of a graph. */
export interface MemoryPlan {
  /** Byte size of each slot. */
  slotBytes: number[];
  /** Slot of every non-variable node in the order. */
  slotOf: Map<Tensor, number>;
  /** Bytes the shared (reusable) slots would have needed without reuse. */
  unsharedBytes: number;
}

/** The tensor whose storage `t` uses (itself unless it is a view or an in-place update). */
export function storageRoot(t: Tensor): Tensor {
  let node = t;
  while (node.source.kind === "op") {
    const shared = node.source.op.aliasOf ?? node.source.op.inPlace;
    if (shared === undefined) break;
    node = node.source.inputs[shared];
  }
  return node;
}

/** Plans storage for `order` (from `schedule`), keeping `outputs` alive to the end. */
export function planMemory(order: readonly Tensor[], outputs: ReadonlySet<Tensor>): MemoryPlan {
  const outputRoots = new Set([...outputs].map(storageRoot));
  const lastUse = new Map<Tensor, number>();
  order.forEach((node, i) => {
    for (const input of inputsOf(node)) lastUse.set(storageRoot(input), i);
  });

  const slotBytes: number[] = [];
  const slotOf = new Map<Tensor, number>();
  const free: number[] = [];
  let unsharedBytes = 0;
  const newSlot = (bytes: number) => slotBytes.push(bytes) - 1;

  // A slot for `node`'s own storage (views and in-place updates share their root's).
  const allocate = (node: Tensor) => {
    const root = storageRoot(node);
    if (root !== node) {
      if (slotOf.has(root)) slotOf.set(node, slotOf.get(root)!);
      return;
    }
    const bytes = node.bytes;
    const kind = node.source.kind;
    if (kind === "variable") return;
    if (kind !== "op" || outputRoots.has(node)) {
      slotOf.set(node, newSlot(bytes));
    } else {
      unsharedBytes += bytes;
      slotOf.set(node, takeFreeSlot(free, slotBytes, bytes) ?? newSlot(bytes));
    }
  };

  order.forEach((node, i) => {
    allocate(node);
    // Release the slots whose last reader is this node (after this node's own allocation; a
    // view may be the last reader of a tensor it is ordered after).
    const released = new Set<Tensor>();
    for (const input of inputsOf(node)) {
      const r = storageRoot(input);
      if (released.has(r) || lastUse.get(r) !== i) continue;
      released.add(r);
      if (r.source.kind === "op" && !outputRoots.has(r) && slotOf.has(r)) free.push(slotOf.get(r)!);
    }
  });
  return { slotBytes, slotOf, unsharedBytes };
}

/** Best-fit free slot for `bytes`; grows the largest free slot when none is big enough. */
function takeFreeSlot(free: number[], slotBytes: number[], bytes: number): number | undefined {
  if (free.length === 0) return undefined;
  let best = -1;
  let largest = 0;
  free.forEach((slot, i) => {
    if (slotBytes[slot] >= bytes && (best < 0 || slotBytes[slot] < slotBytes[free[best]])) best = i;
    if (slotBytes[slot] > slotBytes[free[largest]]) largest = i;
  });
  const pick = best >= 0 ? best : largest;
  const slot = free.splice(pick, 1)[0];
  slotBytes[slot] = Math.max(slotBytes[slot], bytes);
  return slot;
}
