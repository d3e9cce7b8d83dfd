/**
 * Textures holding copies of variables' buffers (e.g. a weight copied into a texture for the
 * texture matmul of CPU adapters), shared by every launch of every executable that copies the
 * same buffer into a texture of the same shape: a weight used by a forward and a backward
 * matmul, or by the prefill and the decode graphs of generation, is held once, not once per
 * matmul. Reference-counted: the texture is destroyed when its last holder releases it.
 *
 * Each source buffer has a version, bumped by every write of it: by the executables whose graphs
 * write it in place (the optimizer's update, a KV cache) and by whoever writes it outside a graph
 * (weight sync, weight broadcast, state loads: {@link VariableTextures.written}). A texture
 * remembers the version it was filled from, so a run whose textures are all current leaves
 * their copies out: a weight is converted once per version, not once per run.
 *
 * The copies are a second copy of the weights they hold, worth their memory only while it is
 * spare: they are kept within a budget (`RFT_WEIGHT_TEXTURES_MIB`, default
 * {@link DEFAULT_WEIGHT_TEXTURES_MIB}), which the ops ask ({@link VariableTextures.admits})
 * before they choose a kernel that copies a weight; past it they read the weight's buffer.
 */

import { textureBytes } from "./memory_ledger.ts";

/** The weight textures' budget when `RFT_WEIGHT_TEXTURES_MIB` is not set: a 135M model's f32 weights. */
export const DEFAULT_WEIGHT_TEXTURES_MIB = 512;

/** Bytes the weight textures may hold: `RFT_WEIGHT_TEXTURES_MIB` (checked by the CLI) or the default. */
export function weightTextureBudget(): number {
  const mib = Number(Deno.env.get("RFT_WEIGHT_TEXTURES_MIB") || DEFAULT_WEIGHT_TEXTURES_MIB);
  return mib * 2 ** 20;
}

/** One shared texture: where the registry keeps it, how many holders it has, and the version of
 * its source it was last filled from (undefined: never filled). */
interface Entry {
  source: GPUBuffer;
  key: string;
  holders: number;
  filledFrom?: number;
}

/** The key of a texture's shape (its size, format and usage) and of its layout. */
function shapeKey(descriptor: GPUTextureDescriptor, layout: string): string {
  return JSON.stringify([descriptor.size, descriptor.format, descriptor.usage, layout]);
}

/** The shared textures of one device, by source buffer and texture shape. */
export class VariableTextures {
  readonly #bySource = new Map<GPUBuffer, Map<string, GPUTexture>>();
  readonly #entries = new Map<GPUTexture, Entry>();
  readonly #versions = new WeakMap<GPUBuffer, number>();

  /** `budgetBytes`: what {@link admits} lets the textures grow to. */
  constructor(readonly device: GPUDevice, readonly budgetBytes = weightTextureBudget()) {}

  /**
   * Whether a copy of `source` of about `bytes` may be made: it has one already, or the held
   * textures and it stay within the budget. Asked when a product is planned, before its kernel
   * is chosen.
   */
  admits(source: GPUBuffer, bytes: number): boolean {
    return this.#bySource.has(source) || this.bytes + bytes <= this.budgetBytes;
  }

  /**
   * The texture of `descriptor`'s shape for copies of `source` laid out as `layout` says (e.g. a
   * weight's linear copy or its packing for one product: two layouts of equal size must not
   * share a texture), made on first use; each call is a hold, ended by {@link release}. The
   * caller records the copies into it.
   */
  acquire(
    source: GPUBuffer,
    descriptor: GPUTextureDescriptor,
    label: string,
    layout: string,
  ): GPUTexture {
    let shapes = this.#bySource.get(source);
    if (!shapes) {
      shapes = new Map();
      this.#bySource.set(source, shapes);
    }
    const key = shapeKey(descriptor, layout);
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

  /**
   * Records a write of `source` (recorded into the device's queue, in order with the runs that
   * copy it): copies of it made before are stale. Every writer of a variable's buffer outside
   * a graph must call this; executables call it for the variables their graphs write.
   */
  written(source: GPUBuffer): void {
    this.#versions.set(source, this.#version(source) + 1);
  }

  /** Whether every one of `textures` holds its source as of the source's latest write. */
  current(textures: readonly GPUTexture[]): boolean {
    return textures.every((t) => {
      const entry = this.#entries.get(t);
      return entry?.filledFrom !== undefined && entry.filledFrom === this.#version(entry.source);
    });
  }

  /** Records that copies of their sources' latest versions into `textures` are recorded. */
  filled(textures: readonly GPUTexture[]): void {
    for (const t of textures) {
      const entry = this.#entries.get(t);
      if (entry) entry.filledFrom = this.#version(entry.source);
    }
  }

  #version(source: GPUBuffer): number {
    return this.#versions.get(source) ?? 0;
  }

  /** How many textures are held (for tests and memory reports). */
  get size(): number {
    return this.#entries.size;
  }

  /** Bytes of the textures held. */
  get bytes(): number {
    let bytes = 0;
    for (const texture of this.#entries.keys()) bytes += textureBytes(texture);
    return bytes;
  }
}
