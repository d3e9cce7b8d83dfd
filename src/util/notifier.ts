/**
 * A change notifier for async code that waits on shared state: waiters park on `changed()` (or
 * loop on a condition with `until`) and whoever changes the state calls `notify()`, which wakes
 * every waiter once. It holds no state of its own and does not poll.
 */

/** Wakes every waiter at each `notify()`; waits end early, rejecting, when their signal aborts. */
export class Notifier {
  readonly #waiters = new Set<() => void>();

  /** Waiters parked now. */
  get waiting(): number {
    return this.#waiters.size;
  }

  /** Resolves at the next `notify()`; rejects with the signal's reason when it aborts first. */
  changed(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#waiters.delete(wake);
        reject(signal!.reason);
      };
      const wake = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      this.#waiters.add(wake);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Resolves once `ready()` holds, checking it at start and after each `notify()`. */
  async until(ready: () => boolean, signal?: AbortSignal): Promise<void> {
    while (!ready()) await this.changed(signal);
  }

  /** Wakes every current waiter. */
  notify(): void {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const wake of waiters) wake();
  }
}
