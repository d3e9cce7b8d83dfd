/**
 * A compiled graph: buffers allocated by the memory plan, every kernel launch prepared once,
 * and `run` that writes new inputs, encodes the whole graph into one command buffer and submits
 * it once. Build once per shape, run many times; read results with one readback. With
 * `RFT_VALIDATE=1` a run goes one op at a time, checked against CPU references (`validate.ts`).
 */

import { beginActivity } from "../util/activity.ts";
import type { GpuContext } from "../gpu/device.ts";
import {
  encodeDispatches,
  type PreparedDispatch,
  prepareDispatch,
  releaseDispatch,
} from "../gpu/dispatch.ts";
import { readBuffers } from "../gpu/readback.ts";
import { debugLevel, printTimes, runTimed } from "../gpu/timing.ts";
import type { Graph } from "./graph.ts";
import { planMemory, storageRoot } from "./memory_plan.ts";
import type { BoundTensor, LaunchContext } from "./op.ts";
import { inputsOf, schedule } from "./schedule.ts";
import { formatShape, type HostData, hostDataOf, type Tensor } from "./tensor.ts";
import { type OpStep, runValidated, validateEnabled, type ValidationReport } from "./validate.ts";

/** A GPU buffer to copy an input from, starting `offset` bytes in. */
export interface BufferFeed {
  source: GPUBuffer;
  offset: number;
}

/** Host data for an input tensor, or a GPU buffer (from its start, or a {@link BufferFeed}). */
export type Feed = HostData | GPUBuffer | BufferFeed;

/** The buffer and byte offset a GPU feed copies from; undefined for host data. */
function gpuFeedOf(data: Feed): BufferFeed | undefined {
  if (data instanceof GPUBuffer) return { source: data, offset: 0 };
  return "source" in data ? data : undefined;
}

/** Extra commands recorded into a run's command buffer, or the command buffer to record into. */
export interface RunHooks {
  /** Recorded after the graph's dispatches. */
  after?: (encoder: GPUCommandEncoder) => void;
  /**
   * Records the run into this encoder instead of submitting a command buffer of its own: the
   * caller submits, so several runs (a block of decode steps) reach the GPU in one submit. Every
   * feed must then be a GPU buffer (host data would be written before anything the encoder holds
   * runs), and runs must be {@link recordable}.
   */
  encoder?: GPUCommandEncoder;
}

/**
 * Whether runs may record into a caller's encoder: not while `RFT_VALIDATE=1` or `RFT_DEBUG=2`
 * make each run submit op by op.
 */
export function recordable(): boolean {
  return !validateEnabled() && debugLevel() < 2;
}

/** Statistics of a compiled graph, for tests and `RFT_DEBUG`. */
export interface ExecutableStats {
  nodes: number;
  dispatches: number;
  /** Bytes of the memory plan's slots, and what they would take unshared. */
  slotBytes: number;
  unsharedBytes: number;
  /** Textures this executable created for its ops (shared by ops in turn). */
  textures: number;
  /** Bytes this executable holds: its pool buffers (slots, scratch) and its own textures. */
  heldBytes: number;
}

/** A graph ready to run. */
export class Executable {
  readonly #bufferOf: (t: Tensor) => GPUBuffer;
  readonly #owned: readonly GPUBuffer[];
  readonly #textures: readonly GPUTexture[];
  readonly #heldTextures: readonly GPUTexture[];
  readonly #steps: readonly OpStep[];
  /** Buffers of the variables this graph writes in place (their versions move on each run). */
  readonly #writtenVariables: readonly GPUBuffer[];
  /** What the last run compared with CPU references (validate mode, `RFT_VALIDATE=1`, only). */
  lastValidation?: ValidationReport;

  constructor(
    readonly gpu: GpuContext,
    readonly graph: Graph,
    readonly label: string,
    readonly inputs: readonly Tensor[],
    readonly dispatches: readonly PreparedDispatch[],
    readonly stats: ExecutableStats,
    bufferOf: (t: Tensor) => GPUBuffer,
    owned: readonly GPUBuffer[],
    textures: readonly GPUTexture[],
    heldTextures: readonly GPUTexture[],
    steps: readonly OpStep[],
    writtenVariables: readonly GPUBuffer[],
  ) {
    this.#writtenVariables = writtenVariables;
    this.#bufferOf = bufferOf;
    this.#owned = owned;
    this.#textures = textures;
    this.#heldTextures = heldTextures;
    this.#steps = steps;
  }

  /** The GPU buffer holding `t` (valid after a run for outputs and inputs). */
  buffer(t: Tensor): GPUBuffer {
    return this.#bufferOf(t);
  }

  /**
   * Writes `feeds` into the inputs, encodes every dispatch into one command buffer and submits
   * it. Every input must be fed on the first run; later runs reuse what is not fed again.
   * `hooks.after` records more commands (e.g. copies of outputs) into the same submit;
   * `hooks.encoder` takes the run instead of a submit of its own.
   */
  async run(feeds: ReadonlyMap<Tensor, Feed> = new Map(), hooks: RunHooks = {}): Promise<void> {
    const { device } = this.gpu;
    if (hooks.encoder && !recordable()) {
      throw new Error(
        `Cannot record graph "${this.label}" into a caller's encoder: RFT_VALIDATE=1 and ` +
          "RFT_DEBUG=2 submit each op on its own",
      );
    }
    for (const [tensor, data] of feeds) {
      if (!this.inputs.includes(tensor)) {
        // An input of the same graph that these outputs do not need is fine to feed.
        if (tensor.source.kind === "input" && tensor.graph === this.graph) continue;
        throw new Error(`Cannot run graph "${this.label}": ${tensor} is not an input of it`);
      }
      if (!gpuFeedOf(data)) {
        const host = data as HostData;
        if (hooks.encoder) {
          throw new Error(
            `Cannot record graph "${this.label}" into a caller's encoder: input ${tensor} is fed ` +
              "host data, expected a GPU buffer",
          );
        }
        if (host.length !== tensor.size) {
          throw new Error(
            `Cannot run graph "${this.label}": input ${tensor} needs ${tensor.size} values, received ${host.length}`,
          );
        }
        device.queue.writeBuffer(this.#bufferOf(tensor), 0, host);
      }
    }
    const copyGpuFeeds = (encoder: GPUCommandEncoder) => {
      for (const [tensor, data] of feeds) {
        const feed = gpuFeedOf(data);
        if (feed && this.inputs.includes(tensor)) {
          const bytes = tensor.bytes;
          encoder.copyBufferToBuffer(feed.source, feed.offset, this.#bufferOf(tensor), 0, bytes);
        }
      }
    };
    // The launches' copies of variables (e.g. packed weights) are left out while every texture
    // they fill holds its variable's latest version, filled by this executable or another one
    // (the prefill and decode graphs of a generate call, every call until the weights change).
    // A validating run records every copy.
    const textures = this.gpu.variableTextures;
    const skipVariableCopies = !validateEnabled() && this.#heldTextures.length > 0 &&
      textures.current(this.#heldTextures);
    if (!skipVariableCopies) textures.filled(this.#heldTextures);
    for (const b of this.#writtenVariables) textures.written(b);
    if (validateEnabled()) {
      this.lastValidation = await runValidated(
        this.gpu,
        this.label,
        this.#steps,
        this.#bufferOf,
        copyGpuFeeds,
        hooks.after,
      );
      return;
    }
    if (debugLevel() >= 2) {
      printTimes(
        await runTimed(this.gpu, this.dispatches, copyGpuFeeds, hooks.after, {
          skipVariableCopies,
        }),
        this.label,
      );
      return;
    }
    const encoder = hooks.encoder ?? device.createCommandEncoder({ label: this.label });
    copyGpuFeeds(encoder);
    encodeDispatches(encoder, this.dispatches, this.label, { skipVariableCopies });
    hooks.after?.(encoder);
    if (!hooks.encoder) device.queue.submit([encoder.finish()]);
  }

  /** Reads tensors (outputs, inputs or variables) back to the host, all in one readback. */
  async read(tensors: readonly Tensor[]): Promise<HostData[]> {
    const raw = await readBuffers(
      this.gpu.device,
      tensors.map((t) => ({ buffer: this.#bufferOf(t), bytes: t.bytes })),
    );
    return raw.map((data, i) => hostDataOf(data, tensors[i].dtype, tensors[i].size));
  }

  /**
   * Returns the executable's buffers to the pool (variables stay), destroys its textures and
   * releases its holds on shared variable textures.
   */
  destroy(): void {
    for (const d of this.dispatches) releaseDispatch(d);
    for (const b of this.#owned) this.gpu.pool.release(b);
    for (const t of this.#textures) t.destroy();
    for (const t of this.#heldTextures) this.gpu.variableTextures.release(t);
  }
}

/**
 * Throws, naming the first tensor of `order` that one storage binding of `limit` bytes cannot
 * hold (every kernel binds its tensors whole).
 */
function checkBindingSizes(order: readonly Tensor[], limit: number, label: string): void {
  const big = order.find((t) => t.bytes > limit);
  if (!big) return;
  const source = big.source;
  const made = source.kind === "op" ? `made by op "${source.op.name}"` : `a ${source.kind}`;
  throw new Error(
    `Cannot compile graph "${label}": tensor ${big.name}${formatShape(big.shape)} (${made}) ` +
      `needs ${big.bytes} bytes in one storage binding, above this adapter's ` +
      `maxStorageBufferBindingSize of ${limit}; rft does not split a tensor over several ` +
      "bindings yet: use shorter sequences or fewer tokens per batch",
  );
}

/**
 * The storage roots an op node updates in place: its in-place input and its `writes` inputs,
 * which must be variables' or graph inputs' (an op result's slot may go to other tensors once
 * the graph sees no more readers of it).
 */
function writtenRoots(node: Tensor): Tensor[] {
  if (node.source.kind !== "op") return [];
  const { op, inputs } = node.source;
  const roots = (op.writes ?? []).map((i) => storageRoot(inputs[i]));
  const strayed = roots.find((r) => r.source.kind === "op");
  if (strayed) {
    throw new Error(
      `Cannot compile op "${op.name}" -> ${node.name}: it writes ${strayed.name} in place, an op's result (expected a variable or a graph input)`,
    );
  }
  return op.inPlace === undefined ? roots : [storageRoot(inputs[op.inPlace]), ...roots];
}

/** Bytes per texel of the texture formats ops create (`matmul_variants.ts`). */
const TEXEL_BYTES: Partial<Record<GPUTextureFormat, number>> = { rgba32float: 16 };

/** Bytes of `texture` (one mip level, as ops create them). */
function textureBytes(texture: GPUTexture): number {
  const texel = TEXEL_BYTES[texture.format];
  if (texel === undefined) throw new Error(`Unexpected texture format ${texture.format}`);
  return texture.width * texture.height * texture.depthOrArrayLayers * texel;
}

/** What makes two op textures interchangeable: size, format, usage, mip levels. */
function textureKey(d: GPUTextureDescriptor): string {
  const [width, height = 1, depth = 1] = Array.isArray(d.size) ? d.size : [
    (d.size as GPUExtent3DDict).width,
    (d.size as GPUExtent3DDict).height,
    (d.size as GPUExtent3DDict).depthOrArrayLayers,
  ];
  return `${width}x${height}x${depth}:${d.format}:${d.usage}:${d.mipLevelCount ?? 1}`;
}

/** Compiles the part of a graph that `outputs` need. */
export async function compileGraph(
  gpu: GpuContext,
  outputs: readonly Tensor[],
  label = "graph",
): Promise<Executable> {
  const { device } = gpu;
  const started = performance.now();
  if (outputs.length === 0) throw new Error(`Cannot compile graph "${label}": no outputs`);
  const order = schedule(outputs);
  checkBindingSizes(order, device.limits.maxStorageBufferBindingSize, label);
  const plan = planMemory(order, new Set(outputs));
  const owned: GPUBuffer[] = [];
  const acquire = (bytes: number, name: string) => {
    const buffer = gpu.pool.acquire(bytes, `${label}:${name}`);
    owned.push(buffer);
    return buffer;
  };
  const slots = plan.slotBytes.map((bytes, i) => acquire(bytes, `slot${i}`));
  const bufferOf = (t: Tensor): GPUBuffer => {
    const root = storageRoot(t);
    if (root.source.kind === "variable") return root.source.variable.buffer;
    const slot = plan.slotOf.get(root);
    if (slot === undefined) {
      throw new Error(`Graph "${label}" has no storage for ${t}: it is not needed by the outputs`);
    }
    return slots[slot];
  };
  const textures: GPUTexture[] = [];
  // Textures an op filled and read (ctx.texture), free for the ops after it, by descriptor.
  const freeTextures = new Map<string, GPUTexture[]>();
  let opTextures: [string, GPUTexture][] = [];
  // A texture from the free ones of its descriptor, else a new one.
  const takeTexture = (descriptor: GPUTextureDescriptor, name: string) => {
    let texture = freeTextures.get(textureKey(descriptor))?.pop();
    if (!texture) {
      texture = device.createTexture({ ...descriptor, label: `${label}:${name}` });
      textures.push(texture);
    }
    return texture;
  };
  // Copies of op inputs (ctx.inputTexture) by tensor, then layout and descriptor key (with the
  // descriptor key they are freed under, after the tensor's last reader).
  const inputCopies = new Map<Tensor, Map<string, [string, GPUTexture]>>();
  const lastReader = new Map<Tensor, Tensor>();
  for (const node of order) {
    if (node.source.kind !== "op" || node.source.op.aliasOf !== undefined) continue;
    for (const t of inputsOf(node)) lastReader.set(t, node);
  }
  let opInputs: readonly BoundTensor[] = []; // of the op being compiled
  const heldTextures: GPUTexture[] = []; // from gpu.variableTextures
  // Variables some op of this graph writes in place (e.g. a KV cache).
  const written = new Set(order.flatMap(writtenRoots));
  const ctx: LaunchContext = {
    gpu,
    scratch: acquire,
    texture: (descriptor, name) => {
      const texture = takeTexture(descriptor, name);
      opTextures.push([textureKey(descriptor), texture]);
      return texture;
    },
    inputTexture: (source, descriptor, name, layout) => {
      const input = opInputs.find((b) => b.buffer === source)?.tensor;
      if (!input) return { texture: ctx.texture(descriptor, name), copied: false };
      if (!inputCopies.has(input)) inputCopies.set(input, new Map());
      const copies = inputCopies.get(input)!;
      const key = textureKey(descriptor);
      const held = copies.get(`${layout} ${key}`);
      if (held) return { texture: held[1], copied: true };
      const texture = takeTexture(descriptor, name);
      copies.set(`${layout} ${key}`, [key, texture]);
      return { texture, copied: false };
    },
    variableTexture: (source, descriptor, name, layout) => {
      const texture = gpu.variableTextures.acquire(
        source,
        descriptor,
        `${source.label}:${name}`,
        layout,
      );
      if (heldTextures.includes(texture)) {
        gpu.variableTextures.release(texture); // one hold per executable
        return { texture, copied: true };
      }
      heldTextures.push(texture);
      return { texture, copied: false };
    },
    isConstantVariable: (t) => {
      const root = storageRoot(t);
      return root.source.kind === "variable" && !written.has(root);
    },
  };

  const dispatches: PreparedDispatch[] = [];
  const steps: OpStep[] = [];
  const inputs: Tensor[] = [];
  using compiling = beginActivity(`compiling kernels of graph "${label}"`, order.length);
  for (const [index, node] of order.entries()) {
    compiling.progress(index);
    const source = node.source;
    if (source.kind === "input") inputs.push(node);
    if (source.kind === "constant") device.queue.writeBuffer(bufferOf(node), 0, source.data);
    if (source.kind !== "op" || source.op.aliasOf !== undefined) continue;
    const bind = (t: Tensor): BoundTensor => ({ tensor: t, buffer: bufferOf(t) });
    opInputs = inputsOf(node).map(bind);
    const launches = await source.op.launch(ctx, opInputs, bind(node), source.attrs);
    const first = dispatches.length;
    for (const l of launches) {
      try {
        dispatches.push(
          await prepareDispatch(gpu, l.spec, l.buffers, l.params, l.workgroups, l),
        );
      } catch (err) {
        (err as Error).message = `${
          (err as Error).message
        }\n  while compiling op "${source.op.name}" -> ${node.name}${formatShape(node.shape)}`;
        throw err;
      }
    }
    steps.push({ node, dispatches: dispatches.slice(first) });
    const freed = [...opTextures];
    for (const t of inputsOf(node)) {
      if (lastReader.get(t) !== node) continue;
      freed.push(...inputCopies.get(t)?.values() ?? []);
      inputCopies.delete(t);
    }
    for (const [key, texture] of freed) {
      if (!freeTextures.has(key)) freeTextures.set(key, []);
      freeTextures.get(key)!.push(texture);
    }
    opTextures = [];
  }
  const stats = {
    nodes: order.length,
    dispatches: dispatches.length,
    slotBytes: plan.slotBytes.reduce((a, b) => a + b, 0),
    unsharedBytes: plan.unsharedBytes,
    textures: textures.length,
    heldBytes: owned.reduce((n, b) => n + b.size, 0) +
      textures.reduce((n, t) => n + textureBytes(t), 0),
  };
  if (debugLevel() >= 1) {
    console.error(
      `[rft] compiled graph "${label}" in ${
        (performance.now() - started).toFixed(0)
      } ms: ${stats.dispatches} dispatches, ${
        (stats.heldBytes / 2 ** 20).toFixed(1)
      } MiB of buffers and textures`,
    );
  }
  return new Executable(
    gpu,
    outputs[0].graph,
    label,
    inputs,
    dispatches,
    stats,
    bufferOf,
    owned,
    textures,
    heldTextures,
    steps,
    [...written].filter((t) => t.source.kind === "variable").map(bufferOf),
  );
}
