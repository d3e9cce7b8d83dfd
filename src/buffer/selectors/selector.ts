/**
 * The task selector contract (Trinity's `BaseSelector`): which rows of a taskset the next draws
 * take, what feedback (the mean reward of a drawn row's rollouts) does to it, and its state for a
 * resumed run. A selector sees row indices and feature columns only; the taskset counts draws
 * and epochs and builds the tasks.
 */

import type { Args, Configurable } from "../../util/registry.ts";

/** What a selector is built from: the taskset's size, seed and the feature columns it names. */
export interface SelectorContext {
  /** Rows of the taskset. */
  size: number;
  /** The taskset's seed (`data_selector.seed`). */
  seed: number;
  /** The row keys of `feature_keys`, in order. */
  featureKeys: readonly string[];
  /** The numeric column `key` of every row; throws naming the first row that lacks it. */
  feature(key: string): number[];
}

/** A configured selector of one taskset. */
export interface TaskSelector {
  /**
   * The row indices of draws `first` .. `first + count - 1`, counted from the start of the run
   * across epochs (draw `d` is in epoch `floor(d / size)`). The same for the same state.
   */
  select(first: number, count: number): number[];
  /** Feedback on drawn rows: `values[i]` is the mean reward of row `indices[i]`'s rollouts. */
  update(indices: readonly number[], values: readonly number[]): void;
  /** The pass rate the selector estimates for each row in `indices`, when it keeps one. */
  estimate?(indices: readonly number[]): number[];
  /** What the selector learned, JSON-serialisable; undefined when it keeps nothing. */
  state(): unknown;
  /** Back to a saved `state()`; throws an Error saying what does not fit. */
  restore(state: unknown): void;
}

/** A registry entry: default `kwargs` and a constructor. */
export interface SelectorFactory extends Configurable {
  /** A selector for `context` with `args` (checked against `defaultArgs`). */
  create(context: SelectorContext, args: Args): TaskSelector;
}

/** A selector that learns nothing: `update` is a no-op and there is no state. */
export function stateless(select: TaskSelector["select"]): TaskSelector {
  return {
    select,
    update() {},
    state: () => undefined,
    restore() {},
  };
}
