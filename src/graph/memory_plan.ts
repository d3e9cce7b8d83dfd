/**
 * Assigns storage to the nodes of a scheduled graph. Op results that are not outputs share
 * slots with results that do not live at the same time (liveness; the largest placed first, see
 * `sharedSlots`); views share their input's slot; inputs, constants and outputs get slots of
 * their own. Variables bring their own buffers.
 */

import { inputsOf } from "./schedule.ts";
import type { Tensor } from "./tensor.ts";

/** Storage assignment of a graph. */
export interface MemoryPlan {
  /** Byte size of each slot. */
  slotBytes: number[];
  /**
   * The slots from this index on hold op results only, none of them an output: values that live
   * within one run (the others hold inputs, constants and outputs, which outlive it).
   */
  firstShared: number;
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

/** When a shared op result holds its storage: from its own op to its last reader, inclusive. */
interface Lifetime {
  tensor: Tensor;
  from: number;
  to: number;
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
  const shared: Lifetime[] = [];
  order.forEach((node, i) => {
    if (storageRoot(node) !== node || node.source.kind === "variable") return;
    if (node.source.kind !== "op" || outputRoots.has(node)) {
      slotOf.set(node, slotBytes.push(node.bytes) - 1);
    } else {
      // A result nobody reads keeps its slot to the end, as an output would.
      shared.push({ tensor: node, from: i, to: lastUse.get(node) ?? order.length });
    }
  });
  const firstShared = slotBytes.length;
  for (const [tensor, slot] of sharedSlots(shared, slotBytes)) slotOf.set(tensor, slot);
  // Views and in-place updates use their root's slot.
  for (const node of order) {
    const root = storageRoot(node);
    if (root !== node && slotOf.has(root)) slotOf.set(node, slotOf.get(root)!);
  }
  const unsharedBytes = shared.reduce((n, l) => n + l.tensor.bytes, 0);
  return { slotBytes, firstShared, slotOf, unsharedBytes };
}

/**
 * Slots for op results that share storage, appended to `slotBytes`, greedy by size: the largest
 * results first, each into the smallest slot no result living at the same time holds, else a new
 * slot of its size. A slot is as large as its first result and never grows, so a small result
 * that lives long (a layer's input kept for its backward pass) does not pin a large slot that a
 * short-lived large one (an MLP activation) would have grown.
 */
function sharedSlots(lifetimes: readonly Lifetime[], slotBytes: number[]): Map<Tensor, number> {
  const bySize = [...lifetimes].sort((a, b) => b.tensor.bytes - a.tensor.bytes || a.from - b.from);
  const slots: { index: number; held: Lifetime[] }[] = [];
  const slotOf = new Map<Tensor, number>();
  for (const life of bySize) {
    // Slots were made largest first, so the last free one is the smallest.
    let slot = slots.findLast((s) => freeDuring(s.held, life) >= 0);
    if (!slot) {
      slot = { index: slotBytes.push(life.tensor.bytes) - 1, held: [] };
      slots.push(slot);
    }
    slot.held.splice(freeDuring(slot.held, life), 0, life);
    slotOf.set(life.tensor, slot.index);
  }
  return slotOf;
}

/**
 * Where `life` goes in `held` (disjoint lifetimes sorted by start) when no lifetime there
 * overlaps it; -1 when one does.
 */
function freeDuring(held: readonly Lifetime[], life: Lifetime): number {
  let lo = 0;
  let hi = held.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (held[mid].from < life.from) lo = mid + 1;
    else hi = mid;
  }
  const before = held[lo - 1];
  const after = held[lo];
  if (before && before.to >= life.from) return -1;
  if (after && after.from <= life.to) return -1;
  return lo;
}
