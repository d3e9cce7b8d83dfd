/**
 * Textures holding copies of variables' buffers (e.g. a weight copied into a texture for the
 * texture matmul of CPU adapters), shared by every launch of every executable that copies the
 * same buffer into a texture of the same shape: a weight used by a forward and a backward
 * matmul, or by the prefill and the decode graphs of generation, is held once, not once per
 * matmul. Reference-counted: the texture is destroyed when its last holder releases it.
 */

/** One shared texture: where the registry keeps it and how many holders it has. */
interface Entry {
  source: GPUBuffer;
  key: string;
  holders: number;
}

/** The key of a texture's shape: its size, format and usage. */
function shapeKey(descriptor: GPUTextureDescriptor): string {
  return JSON.stringify([descriptor.size, descriptor.format, descriptor.usage]);
}

/** The shared textures of one device, by source buffer and texture shape. */
export class VariableTextures {
  readonly #bySource = new Map<GPUBuffer, Map<string, GPUTexture>>();
  readonly #entries = new Map<GPUTexture, Entry>();

  constructor(readonly device: GPUDevice) {}

  /**
   * The texture of `descriptor`'s shape for copies of `source`, made on first use; each call
   * is a hold, ended by {@link release}. The caller records the copies into it.
   */
  acquire(source: GPUBuffer, descriptor: GPUTextureDescriptor, label: string): GPUTexture {
    let shapes = this.#bySource.get(source);
    if (!shapes) {
      shapes = new Map();
      this.#bySource.set(source, shapes);
    }
    const key = shapeKey(descriptor);
    let texture = shapes.get(key);
    if (!texture) {
      texture = this.device.createTexture({ ...descriptor, label });
      shapes.set(key, texture);
      this.#entries.set(texture, { source, key, holders: 0 });
    }
    this.#entries.get(texture)!.holders++;
    return texture;
  }

  /** Ends one hold of `texture` (from {@link acquire}); the last one destroys it. */
  release(texture: GPUTexture): void {
    const entry = this.#entries.get(texture);
    if (!entry) {
      throw new Error(
        `Cannot release texture "${texture.label}": it is not a held variable texture`,
      );
    }
    if (--entry.holders > 0) return;
    texture.destroy();
    this.#entries.delete(texture);
    const shapes = this.#bySource.get(entry.source)!;
    shapes.delete(entry.key);
    if (shapes.size === 0) this.#bySource.delete(entry.source);
  }

  /** How many textures are held (for tests and memory reports). */
  get size(): number {
    return this.#entries.size;
  }
}
