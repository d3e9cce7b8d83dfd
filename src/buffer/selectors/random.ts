/** `random`: every epoch is `size` draws with replacement, seeded by (seed, epoch). */

import { epochOrderSelector, epochRandom } from "./epoch_order.ts";
import type { SelectorFactory } from "./selector.ts";

/** Uniform draws with replacement (a row may come twice in an epoch, or not at all). */
export const randomSelector: SelectorFactory = {
  defaultArgs: {},
  create: ({ size, seed }) =>
    epochOrderSelector(size, (epoch) => {
      const next = epochRandom(seed, epoch);
      return Array.from({ length: size }, () => Math.floor(next() * size));
    }),
};
