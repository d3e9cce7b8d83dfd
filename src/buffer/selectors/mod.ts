/**
 * The task selector registry (Trinity's `SELECTORS`), with the built-ins registered explicitly
 * here; plugins add theirs with `TASK_SELECTORS.register(name, factory)`. Also builds a
 * configured selector from a taskset's `data_selector` section.
 */

import { configure, Registry } from "../../util/registry.ts";
import { difficultyBasedSelector } from "./difficulty_based.ts";
import { offlineEasy2HardSelector } from "./offline_easy2hard.ts";
import { randomSelector } from "./random.ts";
import type { SelectorContext, SelectorFactory, TaskSelector } from "./selector.ts";
import { sequentialSelector } from "./sequential.ts";
import { shuffleSelector } from "./shuffle.ts";

export type { SelectorContext, SelectorFactory, TaskSelector } from "./selector.ts";

/**
 * Selectors by name: `sequential`, `shuffle`, `random`, `offline_easy2hard`,
 * `difficulty_based`.
 */
export const TASK_SELECTORS: Registry<SelectorFactory> = new Registry<SelectorFactory>(
  "task selector",
  [
    ["sequential", sequentialSelector],
    ["shuffle", shuffleSelector],
    ["random", randomSelector],
    ["offline_easy2hard", offlineEasy2HardSelector],
    ["difficulty_based", difficultyBasedSelector],
  ],
);

/** The selector `name` over `context` with `kwargs` checked against its defaults. */
export function createSelector(
  name: string,
  context: SelectorContext,
  kwargs: Readonly<Record<string, unknown>> = {},
): TaskSelector {
  const { entry, args } = configure(TASK_SELECTORS, name, kwargs);
  return entry.create(context, args);
}
