/**
 * An async mutex: callers of `run` execute one at a time, in call order. Used where a compiled
 * graph (whose input and output buffers are shared) may be reached from concurrent callers.
 */

/** Serializes async sections. */
export class Mutex {
  #tail: Promise<unknown> = Promise.resolve();

  /** Runs `fn` after every section started before it has finished; returns its result. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(fn, fn);
    this.#tail = result.catch(() => {});
    return result;
  }
}
