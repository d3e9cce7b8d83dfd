/**
 * Reuses GPU storage buffers by size class, so building and dropping graphs does not churn
 * allocations. Sizes round up to a power of two below 1 MiB and to 1/8 steps above it, but never
 * past the device's storage-binding limit when the request fits under it (a kernel binds a
 * pooled buffer whole).
 */

/** Usage flags of every pooled tensor buffer (uniform too: see `BindingKind`). */
export const TENSOR_USAGE = GPUBufferUsage.STORAGE | GPUBufferUsage.UNIFORM |
  GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;

/** Size class a request of `bytes` is served from. */
export function sizeClass(bytes: number): number {
  const n = Math.max(256, Math.ceil(bytes / 4) * 4);
  const pow = 2 ** Math.ceil(Math.log2(n));
  if (pow <= 1 << 20) return pow;
  const step = pow / 16; // 1/8 of the previous power of two
  return Math.ceil(n / step) * step;
}

/** A free list of storage buffers per size class. */
export class BufferPool {
  readonly #free = new Map<number, GPUBuffer[]>();
  #liveBytes = 0;

  constructor(readonly device: GPUDevice) {}

  /**
   * A buffer of at least `bytes` bytes with {@link TENSOR_USAGE}; contents are undefined. The
   * label is given on creation only (a reused buffer keeps its first label).
   */
  acquire(bytes: number, label = "tensor"): GPUBuffer {
    const size = this.sizeFor(bytes);
    const reused = this.#free.get(size)?.pop();
    if (reused) return reused;
    this.#liveBytes += size;
    return this.device.createBuffer({ label, size, usage: TENSOR_USAGE });
  }

  /** The size of the buffers a request of `bytes` bytes is served with. */
  sizeFor(bytes: number): number {
    const limit = this.device.limits.maxStorageBufferBindingSize;
    return bytes <= limit ? Math.min(sizeClass(bytes), limit) : sizeClass(bytes);
  }

  /** Returns a buffer obtained from {@link acquire} for reuse. */
  release(buffer: GPUBuffer): void {
    const list = this.#free.get(buffer.size) ?? [];
    list.push(buffer);
    this.#free.set(buffer.size, list);
  }

  /** Bytes allocated by this pool so far (in use or free). */
  get allocatedBytes(): number {
    return this.#liveBytes;
  }

  /** Bytes of the free buffers, kept for reuse. */
  get freeBytes(): number {
    let bytes = 0;
    for (const list of this.#free.values()) for (const b of list) bytes += b.size;
    return bytes;
  }

  /** Destroys the free buffers. */
  trim(): void {
    for (const list of this.#free.values()) {
      for (const buffer of list) {
        this.#liveBytes -= buffer.size;
        buffer.destroy();
      }
    }
    this.#free.clear();
  }
}
