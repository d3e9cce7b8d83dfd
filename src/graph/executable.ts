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
import { GraphTextures } from "./graph_textures.ts";
import { textureBytes } from "../gpu/memory_ledger.ts";
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
  /**
   * Bytes this executable holds: its pool buffers (slots, scratch), the shared slots it uses and
   * its own textures.
   */
  heldBytes: number;
}

/** What a compiled graph holds: its launches, buffers and textures (see {@link compileGraph}). */
export interface CompiledParts {
  graph: Graph;
  /** The graph's inputs the outputs need. */
  inputs: readonly Tensor[];
  dispatches: readonly PreparedDispatch[];
  stats: ExecutableStats;
  bufferOf: (t: Tensor) => GPUBuffer;
  /** Pool buffers (slots, scratch), returned on destroy. */
  owned: readonly GPUBuffer[];
  /** Slots lent by the device's shared slots, given back on destroy. */
  lent: readonly GPUBuffer[];
  /** Textures it created, and its holds on variables' textures. */
  textures: readonly GPUTexture[];
  heldTextures: readonly GPUTexture[];
  /** Each op's dispatches, for validate mode. */
  steps: readonly OpStep[];
  /** Buffers of the variables the graph writes in place (their versions move on each run). */
  writtenVariables: readonly GPUBuffer[];
}

/** A graph ready to run. */
export class Executable {
  readonly graph: Graph;
  readonly inputs: readonly Tensor[];
  readonly dispatches: readonly PreparedDispatch[];
  readonly stats: ExecutableStats;
  readonly #parts: CompiledParts;
  /** What the last run compared with CPU references (validate mode, `RFT_VALIDATE=1`, only). */
  lastValidation?: ValidationReport;

  constructor(readonly gpu: GpuContext, readonly label: string, parts: CompiledParts) {
    this.#parts = parts;
    ({ graph: this.graph, inputs: this.inputs, dispatches: this.dispatches, stats: this.stats } =
      parts);
  }

  /** The GPU buffer holding `t` (valid after a run for outputs and inputs). */
  buffer(t: Tensor): GPUBuffer {
    return this.#parts.bufferOf(t);
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
    this.#writeHostFeeds(feeds, hooks.encoder !== undefined);
    const copyGpuFeeds = (encoder: GPUCommandEncoder) => {
      for (const [tensor, data] of feeds) {
        const feed = gpuFeedOf(data);
        if (!feed || !this.inputs.includes(tensor)) continue;
        const target = this.#parts.bufferOf(tensor);
        encoder.copyBufferToBuffer(feed.source, feed.offset, target, 0, tensor.bytes);
      }
    };
    // The launches' copies of variables (e.g. packed weights) are left out while every texture
    // they fill holds its variable's latest version, filled by this executable or another one
    // (the prefill and decode graphs of a generate call, every call until the weights change).
    // A validating run records every copy.
    const textures = this.gpu.variableTextures;
    const skipVariableCopies = !validateEnabled() && this.#parts.heldTextures.length > 0 &&
      textures.current(this.#parts.heldTextures);
    if (!skipVariableCopies) textures.filled(this.#parts.heldTextures);
    for (const b of this.#parts.writtenVariables) textures.written(b);
    if (validateEnabled()) {
      this.lastValidation = await runValidated(
        this.gpu,
        this.label,
        this.#parts.steps,
        this.#parts.bufferOf,
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

  /**
   * Checks that every tensor of `feeds` is an input (or an unneeded input of the same graph) and
   * writes the host data among them into their buffers; `recording` (into a caller's encoder)
   * refuses host data.
   */
  #writeHostFeeds(feeds: ReadonlyMap<Tensor, Feed>, recording: boolean): void {
    for (const [tensor, data] of feeds) {
      if (!this.inputs.includes(tensor)) {
        // An input of the same graph that these outputs do not need is fine to feed.
        if (tensor.source.kind === "input" && tensor.graph === this.graph) continue;
        throw new Error(`Cannot run graph "${this.label}": ${tensor} is not an input of it`);
      }
      if (gpuFeedOf(data)) continue;
      const host = data as HostData;
      if (recording) {
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
      this.gpu.device.queue.writeBuffer(this.#parts.bufferOf(tensor), 0, host);
    }
  }

  /** Reads tensors (outputs, inputs or variables) back to the host, all in one readback. */
  async read(tensors: readonly Tensor[]): Promise<HostData[]> {
    const raw = await readBuffers(
      this.gpu.device,
      tensors.map((t) => ({ buffer: this.#parts.bufferOf(t), bytes: t.bytes })),
    );
    return raw.map((data, i) => hostDataOf(data, tensors[i].dtype, tensors[i].size));
  }

  /**
   * Returns the executable's buffers to the pool (variables stay), destroys its textures and
   * releases its holds on shared variable textures.
   */
  destroy(): void {
    for (const d of this.dispatches) releaseDispatch(d);
    for (const b of this.#parts.owned) this.gpu.pool.release(b);
    this.gpu.sharedSlots.giveBack(this.#parts.lent);
    for (const t of this.#parts.textures) t.destroy();
    for (const t of this.#parts.heldTextures) this.gpu.variableTextures.release(t);
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

/** Compiles the part of a graph that `outputs` need. */
export async function compileGraph(
  gpu: GpuContext,
  outputs: readonly Tensor[],
  label = "graph",
): Promise<Executable> {
  const started = performance.now();
  if (outputs.length === 0) throw new Error(`Cannot compile graph "${label}": no outputs`);
  const order = schedule(outputs);
  checkBindingSizes(order, gpu.device.limits.maxStorageBufferBindingSize, label);
  const memory = allocateSlots(gpu, order, new Set(outputs), label);
  const textures = new GraphTextures(gpu, label, order);
  // Variables some op of this graph writes in place (e.g. a KV cache).
  const written = new Set(order.flatMap(writtenRoots));
  const ctx: LaunchContext = {
    gpu,
    scratch: memory.acquire,
    texture: (descriptor, name) => textures.texture(descriptor, name),
    inputTexture: (...args) => textures.inputTexture(...args),
    variableTexture: (...args) => textures.variableTexture(...args),
    isConstantVariable: (t) => {
      const root = storageRoot(t);
      return root.source.kind === "variable" && !written.has(root);
    },
  };
  const { dispatches, steps } = await prepareLaunches(ctx, order, memory.bufferOf, textures, label);
  const stats = {
    nodes: order.length,
    dispatches: dispatches.length,
    slotBytes: memory.plan.slotBytes.reduce((a, b) => a + b, 0),
    unsharedBytes: memory.plan.unsharedBytes,
    textures: textures.created.length,
    heldBytes: [...memory.owned, ...memory.lent].reduce((n, b) => n + b.size, 0) +
      textures.created.reduce((n, t) => n + textureBytes(t), 0),
  };
  if (debugLevel() >= 1) logCompiled(label, stats, performance.now() - started);
  return new Executable(gpu, label, {
    graph: outputs[0].graph,
    inputs: order.filter((node) => node.source.kind === "input"),
    dispatches,
    stats,
    bufferOf: memory.bufferOf,
    owned: memory.owned,
    lent: memory.lent,
    textures: textures.created,
    heldTextures: textures.held,
    steps,
    writtenVariables: [...written].filter((t) => t.source.kind === "variable").map(
      memory.bufferOf,
    ),
  });
}

/** A graph's memory: the plan, its slots' pool buffers and the buffer of each tensor. */
interface GraphMemory {
  plan: ReturnType<typeof planMemory>;
  /** Every pool buffer it acquired (slots and, through `acquire`, scratch). */
  owned: GPUBuffer[];
  /** The slots lent by the device's shared slots. */
  lent: GPUBuffer[];
  acquire: (bytes: number, name: string) => GPUBuffer;
  bufferOf: (t: Tensor) => GPUBuffer;
}

/**
 * Plans the memory of `order` and acquires its slots: those of values that live within one run
 * from the device's shared slots when a run is one submit (not in validate mode or at
 * `RFT_DEBUG=2`, which submit op by op), the others from the pool.
 */
function allocateSlots(
  gpu: GpuContext,
  order: readonly Tensor[],
  outputs: ReadonlySet<Tensor>,
  label: string,
): GraphMemory {
  const plan = planMemory(order, outputs);
  const owned: GPUBuffer[] = [];
  const acquire = (bytes: number, name: string) => {
    const buffer = gpu.pool.acquire(bytes, `${label}:${name}`);
    owned.push(buffer);
    return buffer;
  };
  const own = (bytes: number, i: number) => acquire(bytes, `slot${i}`);
  const shareable = plan.slotBytes.slice(plan.firstShared);
  const share = recordable();
  const lent = share ? gpu.sharedSlots.lend(shareable, label) : [];
  const slots = [
    ...plan.slotBytes.slice(0, plan.firstShared).map(own),
    ...(share ? lent : shareable.map((bytes, j) => own(bytes, plan.firstShared + j))),
  ];
  const bufferOf = (t: Tensor): GPUBuffer => {
    const root = storageRoot(t);
    if (root.source.kind === "variable") return root.source.variable.buffer;
    const slot = plan.slotOf.get(root);
    if (slot === undefined) {
      throw new Error(`Graph "${label}" has no storage for ${t}: it is not needed by the outputs`);
    }
    return slots[slot];
  };
  return { plan, owned, lent, acquire, bufferOf };
}

/**
 * Writes the constants of `order` and prepares every op's launches once, in schedule order,
 * handing each op its textures; returns the dispatches and each op's share of them.
 */
async function prepareLaunches(
  ctx: LaunchContext,
  order: readonly Tensor[],
  bufferOf: (t: Tensor) => GPUBuffer,
  textures: GraphTextures,
  label: string,
): Promise<{ dispatches: PreparedDispatch[]; steps: OpStep[] }> {
  const dispatches: PreparedDispatch[] = [];
  const steps: OpStep[] = [];
  const bind = (t: Tensor): BoundTensor => ({ tensor: t, buffer: bufferOf(t) });
  using compiling = beginActivity(`compiling kernels of graph "${label}"`, order.length);
  for (const [index, node] of order.entries()) {
    compiling.progress(index);
    const source = node.source;
    if (source.kind === "constant") {
      ctx.gpu.device.queue.writeBuffer(bufferOf(node), 0, source.data);
    }
    if (source.kind !== "op" || source.op.aliasOf !== undefined) continue;
    const inputs = inputsOf(node).map(bind);
    textures.beginOp(inputs);
    const launches = await source.op.launch(ctx, inputs, bind(node), source.attrs);
    const first = dispatches.length;
    for (const l of launches) {
      try {
        dispatches.push(
          await prepareDispatch(ctx.gpu, l.spec, l.buffers, l.params, l.workgroups, l),
        );
      } catch (err) {
        (err as Error).message = `${
          (err as Error).message
        }\n  while compiling op "${source.op.name}" -> ${node.name}${formatShape(node.shape)}`;
        throw err;
      }
    }
    steps.push({ node, dispatches: dispatches.slice(first) });
    textures.endOp(node);
  }
  return { dispatches, steps };
}

/** The `RFT_DEBUG=1` line of a compiled graph. */
function logCompiled(label: string, stats: ExecutableStats, ms: number): void {
  console.error(
    `[rft] compiled graph "${label}" in ${ms.toFixed(0)} ms: ${stats.dispatches} dispatches, ${
      (stats.heldBytes / 2 ** 20).toFixed(1)
    } MiB of buffers and textures`,
  );
}
