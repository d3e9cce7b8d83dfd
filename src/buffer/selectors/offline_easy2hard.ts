/**
 * `offline_easy2hard` (Trinity's `OfflineEasy2HardSelector`): the rows sorted once by their
 * feature columns (first key first, ties by the next, then by row), drawn in that order every
 * epoch. Trinity takes a higher value as easier (`descending: true`, its only order); a
 * difficulty column (higher = harder) wants `descending: false`. Learns nothing online.
 */

import { epochOrderSelector } from "./epoch_order.ts";
import type { SelectorFactory } from "./selector.ts";

/** Easy to hard by the `feature_keys` columns; kwargs `descending` (default true, Trinity's). */
export const offlineEasy2HardSelector: SelectorFactory = {
  defaultArgs: { descending: true },
  create: ({ size, featureKeys, feature }, args) => {
    if (featureKeys.length === 0) {
      throw new Error("offline_easy2hard expected at least one feature key, found none");
    }
    const columns = featureKeys.map(feature);
    const sign = args.descending ? -1 : 1;
    const order = Array.from({ length: size }, (_, i) => i).sort((a, b) => {
      for (const column of columns) {
        if (column[a] !== column[b]) return sign * (column[a] - column[b]);
      }
      return a - b;
    });
    return epochOrderSelector(size, () => order);
  },
};
