/**
 * Slot buffers the compiled graphs of one device share. A graph's intermediate results live
 * within one of its runs only, and a run is one submit (the queue runs submits in order), so
 * graphs whose runs are separate submits may keep their intermediates in the same buffers: the
 * device then holds, per buffer size, what the graph needing the most of that size needs, not
 * the sum over graphs (the trainer's step, the reference's log-probs, the explorer's prefill and
 * decode). Buffers are of the pool's size classes and shared only at equal size, so a graph gets
 * the very sizes it would have got from the pool.
 */

import type { BufferPool } from "./buffer_pool.ts";

/** A shared buffer and how many graphs use it. */
interface SharedBuffer {
  buffer: GPUBuffer;
  users: number;
}

/** The shared slot buffers of one device (see the file comment). */
export class SharedSlots {
  readonly #buffers: SharedBuffer[] = [];

  constructor(readonly pool: BufferPool) {}

  /**
   * One buffer for each slot of `sizes` bytes, none of them twice: a shared buffer of the slot's
   * size class that the graph does not use yet, else a new one from the pool.
   */
  lend(sizes: readonly number[], label: string): GPUBuffer[] {
    const taken = new Set<SharedBuffer>();
    return sizes.map((bytes) => {
      const size = this.pool.sizeFor(bytes);
      let shared = this.#buffers.find((s) => s.buffer.size === size && !taken.has(s));
      if (!shared) {
        shared = { buffer: this.pool.acquire(bytes, `${label}:shared slot`), users: 0 };
        this.#buffers.push(shared);
      }
      taken.add(shared);
      shared.users++;
      return shared.buffer;
    });
  }

  /** Ends a graph's use of `buffers` (from {@link lend}); one no graph uses goes to the pool. */
  giveBack(buffers: readonly GPUBuffer[]): void {
    for (const buffer of buffers) {
      const i = this.#buffers.findIndex((s) => s.buffer === buffer);
      if (i < 0) throw new Error(`Cannot give back buffer "${buffer.label}": it was not lent`);
      if (--this.#buffers[i].users > 0) continue;
      this.#buffers.splice(i, 1);
      this.pool.release(buffer);
    }
  }
}
