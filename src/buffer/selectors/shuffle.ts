/** `shuffle`: every epoch draws each row once, in a permutation seeded by (seed, epoch). */

import { epochOrderSelector, epochRandom } from "./epoch_order.ts";
import type { SelectorFactory } from "./selector.ts";

/** A Fisher-Yates permutation of the rows per epoch, different each epoch. */
export const shuffleSelector: SelectorFactory = {
  defaultArgs: {},
  create: ({ size, seed }) =>
    epochOrderSelector(size, (epoch) => {
      const next = epochRandom(seed, epoch);
      const order = Array.from({ length: size }, (_, i) => i);
      for (let i = size - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [order[i], order[j]] = [order[j], order[i]];
      }
      return order;
    }),
};
