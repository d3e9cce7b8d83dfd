/**
 * A selector that draws each epoch in an order fixed by (seed, epoch): the shared part of
 * `sequential`, `shuffle`, `random` and `offline_easy2hard`. Caches the current epoch's order.
 */

import { mulberry32 } from "../../util/random.ts";
import { stateless, type TaskSelector } from "./selector.ts";

/** A selector whose epoch `e` draws `orderOf(e)` (a list of `size` row indices) in turn. */
export function epochOrderSelector(
  size: number,
  orderOf: (epoch: number) => number[],
): TaskSelector {
  let cached = { epoch: -1, order: [] as number[] };
  return stateless((first, count) =>
    Array.from({ length: count }, (_, i) => {
      const draw = first + i;
      const epoch = Math.floor(draw / size);
      if (cached.epoch !== epoch) cached = { epoch, order: orderOf(epoch) };
      return cached.order[draw % size];
    })
  );
}

/** A generator of uniform numbers for (`seed`, `epoch`): the same for the same pair. */
export function epochRandom(seed: number, epoch: number): () => number {
  return mulberry32((seed ^ Math.imul(epoch + 1, 0x9e3779b9)) >>> 0);
}
