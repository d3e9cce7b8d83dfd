/**
 * What a device holds: every buffer and texture created on it, counted from creation until it is
 * destroyed (or collected), with the most held at once. On CPU adapters GPU memory is host memory,
 * so this is the part of the process's resident memory that rft's GPU objects account for; the
 * memory report names its parts (weights, optimizer state, graph buffers, textures) from the
 * objects that own them and the rest from the labels here.
 */

/** Bytes per texel of the texture formats rft creates. */
const TEXEL_BYTES: Readonly<Record<string, number>> = {
  rgba32float: 16,
  rgba32uint: 16,
  rgba16float: 8,
  r32float: 4,
  r32uint: 4,
};

/** Bytes of a texture of `descriptor` (one mip level, as rft creates them). */
export function textureDescriptorBytes(descriptor: GPUTextureDescriptor): number {
  const size = descriptor.size;
  const [width, height = 1, depth = 1] = Array.isArray(size) ? size : [
    (size as GPUExtent3DDict).width,
    (size as GPUExtent3DDict).height,
    (size as GPUExtent3DDict).depthOrArrayLayers,
  ];
  const texel = TEXEL_BYTES[descriptor.format];
  if (texel === undefined) throw new Error(`Unexpected texture format ${descriptor.format}`);
  return width * height * depth * texel;
}

/** Bytes of `texture` (one mip level, as rft creates them). */
export function textureBytes(texture: GPUTexture): number {
  return textureDescriptorBytes({
    size: [texture.width, texture.height, texture.depthOrArrayLayers],
    format: texture.format,
    usage: texture.usage,
  });
}

/** One live allocation. */
interface Allocation {
  kind: "buffer" | "texture";
  label: string;
  bytes: number;
}

/** Live bytes of a device's buffers and textures (see the file comment). */
export class MemoryLedger {
  readonly #live = new Map<number, Allocation>();
  readonly #collected = new FinalizationRegistry<number>((id) => this.#forget(id));
  #next = 0;
  #bytes = 0;
  #peak = 0;

  /** Counts from now on every buffer and texture `device` creates. */
  constructor(device: GPUDevice) {
    const createBuffer = device.createBuffer.bind(device);
    const createTexture = device.createTexture.bind(device);
    device.createBuffer = (descriptor) => {
      const buffer = createBuffer(descriptor);
      return this.#track(buffer, "buffer", descriptor.label ?? "", descriptor.size);
    };
    device.createTexture = (descriptor) => {
      const texture = createTexture(descriptor);
      const bytes = textureDescriptorBytes(descriptor);
      return this.#track(texture, "texture", descriptor.label ?? "", bytes);
    };
  }

  /** Bytes held now, by kind. */
  get held(): { buffers: number; textures: number; total: number } {
    let buffers = 0;
    for (const a of this.#live.values()) if (a.kind === "buffer") buffers += a.bytes;
    return { buffers, textures: this.#bytes - buffers, total: this.#bytes };
  }

  /** The most bytes held at once so far. */
  get peak(): number {
    return this.#peak;
  }

  /** Live allocations whose label `matches`, summed. */
  bytesWhere(matches: (label: string, kind: Allocation["kind"]) => boolean): number {
    let bytes = 0;
    for (const a of this.#live.values()) if (matches(a.label, a.kind)) bytes += a.bytes;
    return bytes;
  }

  #track<T extends GPUBuffer | GPUTexture>(
    object: T,
    kind: Allocation["kind"],
    label: string,
    bytes: number,
  ): T {
    const id = this.#next++;
    this.#live.set(id, { kind, label, bytes });
    this.#bytes += bytes;
    this.#peak = Math.max(this.#peak, this.#bytes);
    const destroy = object.destroy.bind(object);
    object.destroy = () => {
      this.#forget(id);
      this.#collected.unregister(object);
      destroy();
    };
    this.#collected.register(object, id, object);
    return object;
  }

  #forget(id: number): void {
    const a = this.#live.get(id);
    if (!a) return;
    this.#bytes -= a.bytes;
    this.#live.delete(id);
  }
}
