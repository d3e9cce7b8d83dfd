/**
 * The textures of one graph being compiled, behind `LaunchContext`'s texture methods: a pool of
 * op textures that later ops reuse once an op is done with them (by descriptor), copies of op
 * inputs shared by the ops that copy the same tensor into the same layout up to its last reader,
 * and holds on the GPU-wide textures of variables (`GpuContext.variableTextures`, one hold per
 * executable). What the executable then owns (its textures, its holds) comes out of `owned`.
 */

import type { GpuContext } from "../gpu/device.ts";
import type { BoundTensor } from "./op.ts";
import { inputsOf } from "./schedule.ts";
import type { Tensor } from "./tensor.ts";

/** What makes two op textures interchangeable: size, format, usage, mip levels. */
function textureKey(d: GPUTextureDescriptor): string {
  const [width, height = 1, depth = 1] = Array.isArray(d.size) ? d.size : [
    (d.size as GPUExtent3DDict).width,
    (d.size as GPUExtent3DDict).height,
    (d.size as GPUExtent3DDict).depthOrArrayLayers,
  ];
  return `${width}x${height}x${depth}:${d.format}:${d.usage}:${d.mipLevelCount ?? 1}`;
}

/** A texture and the key it is pooled under. */
type Keyed = [key: string, texture: GPUTexture];

/** A texture and whether an earlier launch of the graph fills it. */
export interface SharedTexture {
  texture: GPUTexture;
  copied: boolean;
}

/** The textures of one graph's ops, handed out op by op in schedule order (see the file comment). */
export class GraphTextures {
  /** Textures this graph created. */
  readonly created: GPUTexture[] = [];
  /** Holds on variables' textures (one per texture). */
  readonly held: GPUTexture[] = [];
  /** Textures an op filled and read, free for the ops after it, by key. */
  readonly #free = new Map<string, GPUTexture[]>();
  /** The current op's own textures. */
  #opTextures: Keyed[] = [];
  /** Copies of op inputs by tensor, then layout and key. */
  readonly #inputCopies = new Map<Tensor, Map<string, Keyed>>();
  /** Each tensor's last reader (views not counted). */
  readonly #lastReader = new Map<Tensor, Tensor>();
  /** The inputs of the op being compiled. */
  #opInputs: readonly BoundTensor[] = [];

  constructor(readonly gpu: GpuContext, readonly label: string, order: readonly Tensor[]) {
    for (const node of order) {
      if (node.source.kind !== "op" || node.source.op.aliasOf !== undefined) continue;
      for (const t of inputsOf(node)) this.#lastReader.set(t, node);
    }
  }

  /** Starts handing out textures to the op whose bound inputs are `inputs`. */
  beginOp(inputs: readonly BoundTensor[]): void {
    this.#opInputs = inputs;
  }

  /** Returns op `node`'s own textures, and the input copies it read last, to the pool. */
  endOp(node: Tensor): void {
    const freed = [...this.#opTextures];
    for (const t of inputsOf(node)) {
      if (this.#lastReader.get(t) !== node) continue;
      freed.push(...this.#inputCopies.get(t)?.values() ?? []);
      this.#inputCopies.delete(t);
    }
    for (const [key, texture] of freed) {
      if (!this.#free.has(key)) this.#free.set(key, []);
      this.#free.get(key)!.push(texture);
    }
    this.#opTextures = [];
  }

  /** `LaunchContext.texture`: a texture for the current op alone. */
  texture(descriptor: GPUTextureDescriptor, name: string): GPUTexture {
    const texture = this.#take(descriptor, name);
    this.#opTextures.push([textureKey(descriptor), texture]);
    return texture;
  }

  /** `LaunchContext.inputTexture`: the copy of the current op's input bound to `source`. */
  inputTexture(
    source: GPUBuffer,
    descriptor: GPUTextureDescriptor,
    name: string,
    layout: string,
  ): SharedTexture {
    const input = this.#opInputs.find((b) => b.buffer === source)?.tensor;
    if (!input) return { texture: this.texture(descriptor, name), copied: false };
    if (!this.#inputCopies.has(input)) this.#inputCopies.set(input, new Map());
    const copies = this.#inputCopies.get(input)!;
    const key = textureKey(descriptor);
    const held = copies.get(`${layout} ${key}`);
    if (held) return { texture: held[1], copied: true };
    const texture = this.#take(descriptor, name);
    copies.set(`${layout} ${key}`, [key, texture]);
    return { texture, copied: false };
  }

  /** `LaunchContext.variableTexture`: the GPU-wide copy of a variable's buffer, held once. */
  variableTexture(
    source: GPUBuffer,
    descriptor: GPUTextureDescriptor,
    name: string,
    layout: string,
  ): SharedTexture {
    const { variableTextures } = this.gpu;
    const texture = variableTextures.acquire(source, descriptor, `${source.label}:${name}`, layout);
    if (this.held.includes(texture)) {
      variableTextures.release(texture); // one hold per executable
      return { texture, copied: true };
    }
    this.held.push(texture);
    return { texture, copied: false };
  }

  /** A free texture of `descriptor`'s key, else a new one. */
  #take(descriptor: GPUTextureDescriptor, name: string): GPUTexture {
    let texture = this.#free.get(textureKey(descriptor))?.pop();
    if (!texture) {
      texture = this.gpu.device.createTexture({ ...descriptor, label: `${this.label}:${name}` });
      this.created.push(texture);
    }
    return texture;
  }
}
