/**
 * A keyed cache of at most `capacity` entries that drops (and disposes) the least recently used
 * one to make room. Owners of compiled graphs and KV caches keep one per shape they meet; a run
 * whose shapes keep changing then holds a bounded number of them instead of every one it saw.
 */

/** Entries by key, least recently used first, disposed when dropped. */
export class LruCache<V> {
  readonly #entries = new Map<string, V>();
  /** Entries being created, so concurrent callers of one key share one creation. */
  readonly #pending = new Map<string, Promise<V>>();

  constructor(
    /** Most entries held at once (at least 1). */
    readonly capacity: number,
    /** Frees a dropped entry's resources. */
    readonly dispose: (value: V, key: string) => void,
  ) {
    if (!(Number.isInteger(capacity) && capacity >= 1)) {
      throw new Error(`Cannot create an LRU cache: expected a capacity >= 1, received ${capacity}`);
    }
  }

  /** Entries held now. */
  get size(): number {
    return this.#entries.size;
  }

  /** The entry of `key`, now the most recently used, or undefined. */
  get(key: string): V | undefined {
    const value = this.#entries.get(key);
    if (value !== undefined) {
      this.#entries.delete(key);
      this.#entries.set(key, value);
    }
    return value;
  }

  /**
   * The entry of `key`; when there is none, drops least recently used entries until one more
   * fits (before creating, so their memory is free for the new one), then creates it, once for
   * concurrent callers of one key. Entries a caller still uses must be more recent than the
   * `capacity - 1` others.
   */
  async getOrCreate(key: string, create: () => Promise<V> | V): Promise<V> {
    const cached = this.get(key);
    if (cached !== undefined) return cached;
    const pending = this.#pending.get(key);
    if (pending) return await pending; // a concurrent caller is creating it: share that one
    while (this.#entries.size >= this.capacity) this.delete(this.#entries.keys().next().value!);
    const creating = Promise.resolve().then(create);
    this.#pending.set(key, creating);
    try {
      const value = await creating;
      this.#entries.set(key, value);
      return value;
    } finally {
      this.#pending.delete(key);
    }
  }

  /** Drops and disposes the entry of `key`; false when there is none. */
  delete(key: string): boolean {
    const value = this.#entries.get(key);
    if (value === undefined) return false;
    this.#entries.delete(key);
    this.dispose(value, key);
    return true;
  }

  /** Drops and disposes every entry `matches` accepts. */
  deleteWhere(matches: (value: V, key: string) => boolean): void {
    for (const [key, value] of [...this.#entries]) {
      if (matches(value, key)) this.delete(key);
    }
  }

  /** Drops and disposes every entry. */
  clear(): void {
    this.deleteWhere(() => true);
  }
}
