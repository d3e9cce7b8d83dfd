/** `sequential`: every epoch draws the rows in file order. */

import { epochOrderSelector } from "./epoch_order.ts";
import type { SelectorFactory } from "./selector.ts";

/** Rows 0, 1, ..., size - 1 in every epoch. */
export const sequentialSelector: SelectorFactory = {
  defaultArgs: {},
  create: ({ size }) => epochOrderSelector(size, () => Array.from({ length: size }, (_, i) => i)),
};
