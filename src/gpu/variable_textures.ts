/**
 * Textures holding copies of variables' buffers (e.g. a weight copied into a texture for the
 * texture matmul of CPU adapters), shared by every launch of every executable that copies the
 * same buffer into a texture of the same shape: a weight used by a forward and a backward
 * matmul, or by the prefill and the decode graphs of generation, is held once, not once per
 * matmul. Reference-counted: the texture is destroyed when its last holder releases it.
 */

/** One shared texture and how many holders it has. */
interface Entry {
  texture: GPUTexture;
  holders: number;
}

/** The key of a texture's shape: its size, format and usage. */
function shapeKey(descriptor: GPUTextureDescriptor): string {
  return JSON.stringify([descriptor.size, descriptor.format, descriptor.usage]);
}

/** The shared textures of one device, by source buffer and texture shape. */
export class VariableTextures {
  readonly #entries = new Map<GPUBuffer, Map<string, Entry>>();

  constructor(readonly device: GPUDevice) {}

  /**
   * The texture of `descriptor`'s shape for copies of `source`, made on first use; each call
   * is a hold, ended by {@link release}. The caller records the copies into it.
   */
  acquire(source: GPUBuffer, descriptor: GPUTextureDescriptor, label: string): GPUTexture {
    let shapes = this.#entries.get(source);
    if (!shapes) {
      shapes = new Map();
      this.#entries.set(source, shapes);
    }
    const key = shapeKey(descriptor);
    let entry = shapes.get(key);
    if (!entry) {
      entry = { texture: this.device.createTexture({ ...descriptor, label }), holders: 0 };
      shapes.set(key, entry);
    }
    entry.holders++;
    return entry.texture;
  }

  /** Ends one hold of `texture` (from {@link acquire}); the last one destroys it. */
  release(texture: GPUTexture): void {
    for (const [source, shapes] of this.#entries) {
      for (const [key, entry] of shapes) {
        if (entry.texture !== texture) continue;
        if (--entry.holders > 0) return;
        texture.destroy();
        shapes.delete(key);
        if (shapes.size === 0) this.#entries.delete(source);
        return;
      }
    }
    throw new Error(`Cannot release texture "${texture.label}": it is not a held variable texture`);
  }

  /** How many textures are held (for tests and memory reports). */
  get size(): number {
    let n = 0;
    for (const shapes of this.#entries.values()) n += shapes.size;
    return n;
  }
}
