/**
 * The memory report, two ways. `memoryReport`: what a run keeps on the GPU for its policy,
 * computed from the model's shape alone: the trainer's f32 weights (a LoRA base in its frozen
 * dtype, and the adapter), one f32 gradient and two AdamW moments (f32 or bf16) per trainable
 * parameter, the explorer's copy of the weights in its dtype and a KL reference's in the
 * checkpoint's; with LoRA the explorer's copy is the adapter's alone and the reference is the
 * base, both shared. Against the floor of 16 bytes per trained parameter (f32 weights, gradients
 * and moments). Shows why LoRA fits: the gradients and moments shrink to the adapter's size.
 * `measureMemory`: what the process holds at one moment, by part: each model's weights, the
 * optimizer's moments, the graphs' buffers (activations, gradients, KV caches), the weight and
 * operand textures, the rest of the device's buffers (all counted by the device's ledger), the
 * JavaScript heap and array buffers, and what is left of the resident set (runtime, driver).
 */

import type { GpuContext } from "../gpu/device.ts";
import type { ModelConfig } from "../model/hf_config.ts";
import type { PolicyModel } from "../model/policy.ts";
import type { AdamW } from "./adamw.ts";
import { GRAD_SUM_SUFFIX } from "./grad_accumulator.ts";
import type { WeightDtype } from "../model/weight_transfer.ts";
import { type LoraSettings, loraTargets } from "../model/lora.ts";
import { parameterSpecs } from "../model/parameters.ts";
import { shapeSize } from "../graph/tensor.ts";

/** Parameter counts and bytes of one policy setup. */
export interface MemoryReport {
  /** Parameters of the model (the base, when training LoRA). */
  parameters: number;
  /** Parameters the optimizer updates: all of them, or the adapter's. */
  trainableParameters: number;
  /** The trainer's weights, adapter included (a LoRA base in its frozen dtype). */
  weightBytes: number;
  /** One f32 gradient per trainable parameter. */
  gradientBytes: number;
  /** AdamW's first and second moments. */
  optimizerBytes: number;
  /** The explorer's copy of the weights (of the adapter with LoRA); 0 without an explorer. */
  explorerBytes: number;
  /** A KL reference's frozen copy of the weights (0 with LoRA: the base is the reference). */
  referenceBytes: number;
  totalBytes: number;
  /**
   * The floor: 16 bytes per trained parameter (f32 weights and gradients, two f32 moments), and
   * a LoRA base's frozen weights.
   */
  floorBytes: number;
}

/** Options of {@link memoryReport}. */
export interface MemoryReportOptions {
  /** The adapter trained instead of all weights. */
  lora?: LoraSettings;
  /** The dtype of frozen matrices (a LoRA base, a KL reference): the checkpoint's; default f32. */
  frozenDtype?: WeightDtype;
  /** The explorer's copy and the dtype of its matrices; absent: no explorer. */
  explorer?: WeightDtype;
  /** A KL reference beside the trained weights (full-parameter training only). */
  reference?: boolean;
  /** AdamW's moments' dtype; default float32. */
  momentsDtype?: "float32" | "bfloat16";
}

/** Bytes of `cfg`'s weights with their matrices stored as `dtype` (vectors f32). */
function weightsBytes(cfg: ModelConfig, dtype: WeightDtype): number {
  const matrix = dtype === "f32" ? 4 : 2;
  return parameterSpecs(cfg).reduce(
    (n, spec) => n + shapeSize(spec.shape) * (spec.shape.length === 2 ? matrix : 4),
    0,
  );
}

/** The memory report of a policy with config `cfg` (see the file comment). */
export function memoryReport(cfg: ModelConfig, options: MemoryReportOptions = {}): MemoryReport {
  const parameters = parameterSpecs(cfg).reduce((n, spec) => n + shapeSize(spec.shape), 0);
  const { lora, frozenDtype = "f32", explorer, momentsDtype = "float32" } = options;
  const adapter = lora
    ? loraTargets(cfg, lora.targetModules).reduce((n, t) => n + lora.rank * (t.inDim + t.outDim), 0)
    : 0;
  const trainableParameters = lora ? adapter : parameters;
  const frozenBase = lora ? weightsBytes(cfg, frozenDtype) : 0;
  const weightBytes = lora ? frozenBase + 4 * adapter : 4 * parameters;
  const gradientBytes = 4 * trainableParameters;
  const optimizerBytes = (momentsDtype === "bfloat16" ? 4 : 8) * trainableParameters;
  const explorerBytes = explorer === undefined
    ? 0
    : lora
    ? 4 * adapter
    : weightsBytes(cfg, explorer);
  const referenceBytes = options.reference && !lora ? weightsBytes(cfg, frozenDtype) : 0;
  return {
    parameters,
    trainableParameters,
    weightBytes,
    gradientBytes,
    optimizerBytes,
    explorerBytes,
    referenceBytes,
    totalBytes: weightBytes + gradientBytes + optimizerBytes + explorerBytes + referenceBytes,
    floorBytes: 16 * trainableParameters + frozenBase,
  };
}

/** The report as one log line. */
export function formatMemoryReport(r: MemoryReport): string {
  const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  const pct = (100 * r.trainableParameters / r.parameters).toPrecision(3);
  return `memory: ${r.parameters} parameters, ${r.trainableParameters} trainable (${pct}%); ` +
    `weights ${mb(r.weightBytes)}, gradients ${mb(r.gradientBytes)}, optimizer ${
      mb(r.optimizerBytes)
    }, explorer ${mb(r.explorerBytes)}, reference ${mb(r.referenceBytes)}; total ${
      mb(r.totalBytes)
    } (floor ${mb(r.floorBytes)}; activations not counted)`;
}

/**
 * Bytes of the activations a training graph of `tokens` tokens keeps from its forward pass for
 * its backward pass when no layer is recomputed (an estimate: per layer and token the block's
 * inputs, norms, q, k, v, attention output, the MLP's two inner products and activation and the
 * residual sums, f32).
 */
export function storedActivationBytes(cfg: ModelConfig, tokens: number): number {
  const q = cfg.numHeads * cfg.headDim;
  const kv = cfg.numKvHeads * cfg.headDim;
  const perLayer = 6 * cfg.hiddenSize + 2 * q + 3 * kv + 3 * cfg.intermediateSize;
  return 4 * perLayer * cfg.numLayers * tokens;
}

/** What a process holds at one moment (see the file comment), in bytes. */
export interface MemoryUse {
  /** The device's parts by name, in report order (on CPU adapters host memory too). */
  gpu: [string, number][];
  /** Everything the device holds now, and the most it held at once. */
  gpuTotal: number;
  gpuPeak: number;
  /** The JavaScript heap in use and the array buffers outside it. */
  heap: number;
  arrayBuffers: number;
  /** The process's resident set. */
  resident: number;
}

/** Who holds the named parts of {@link measureMemory}: models by role, the optimizer. */
export interface MemoryOwners {
  models: Readonly<Record<string, PolicyModel | undefined>>;
  optimizer?: AdamW;
}

/** What the process holds now, by part (see the file comment). */
export function measureMemory(gpu: GpuContext, owners: MemoryOwners): MemoryUse {
  const counted = new Set<GPUBuffer>();
  const bytesOf = (buffers: Iterable<GPUBuffer>) => {
    let bytes = 0;
    for (const b of buffers) {
      if (!counted.has(b)) bytes += b.size;
      counted.add(b);
    }
    return bytes;
  };
  const parts: [string, number][] = [];
  for (const [role, model] of Object.entries(owners.models)) {
    if (!model) continue;
    const variables = [...model.variables(), ...model.lora?.variables() ?? []];
    parts.push([`${role} weights`, bytesOf(variables.map((v) => v.buffer))]);
  }
  if (owners.optimizer) parts.push(["optimizer moments", bytesOf(owners.optimizer.stateBuffers)]);
  const gradientSums = gpu.memory.bytesWhere((label, kind) =>
    kind === "buffer" && label.endsWith(GRAD_SUM_SUFFIX)
  );
  parts.push(["gradient sums", gradientSums]);
  const held = gpu.memory.held;
  const named = parts.reduce((n, [, bytes]) => n + bytes, 0);
  const graphBuffers = gpu.pool.allocatedBytes - gpu.pool.freeBytes;
  const weightTextures = gpu.variableTextures.bytes;
  parts.push(
    ["graph buffers", graphBuffers],
    ["free pooled buffers", gpu.pool.freeBytes],
    ["weight textures", weightTextures],
    ["operand textures", held.textures - weightTextures],
    ["other buffers", held.buffers - named - gpu.pool.allocatedBytes],
  );
  const host = Deno.memoryUsage();
  return {
    gpu: parts.filter(([, bytes]) => bytes > 0),
    gpuTotal: held.total,
    gpuPeak: gpu.memory.peak,
    heap: host.heapUsed,
    arrayBuffers: host.external,
    resident: host.rss,
  };
}

/** GiB with two decimals. */
const gib = (bytes: number) => (bytes / 2 ** 30).toFixed(2);

/** {@link MemoryUse} as one log line, every part named. */
export function formatMemoryUse(use: MemoryUse): string {
  const rest = use.resident - use.gpuTotal - use.heap - use.arrayBuffers;
  const parts = use.gpu.map(([name, bytes]) => `${name} ${gib(bytes)}`).join(", ");
  return `resident ${gib(use.resident)} GiB = device ${gib(use.gpuTotal)} (${parts}; ` +
    `peak ${gib(use.gpuPeak)}) + JS heap ${gib(use.heap)} + array buffers ${
      gib(use.arrayBuffers)
    } + runtime and driver ${gib(rest)}`;
}

/**
 * {@link MemoryUse} as metrics: verl's `perf/` names (GB = 2^30 bytes) and each part as
 * `memory/<part>_gb` (the device's parts, the JavaScript heap and array buffers, and the rest of
 * the resident set as `memory/runtime_gb`).
 */
export function memoryMetrics(use: MemoryUse): Record<string, number> {
  const gb = (bytes: number) => bytes / 2 ** 30;
  const parts: [string, number][] = [
    ...use.gpu,
    ["js heap", use.heap],
    ["array buffers", use.arrayBuffers],
    ["runtime", use.resident - use.gpuTotal - use.heap - use.arrayBuffers],
  ];
  return {
    "perf/memory_allocated_gb": gb(use.gpuTotal),
    "perf/max_memory_allocated_gb": gb(use.gpuPeak),
    "perf/cpu_memory_used_gb": gb(use.resident),
    ...Object.fromEntries(parts.map(([name, bytes]) => [
      `memory/${name.replaceAll(" ", "_")}_gb`,
      gb(bytes),
    ])),
  };
}
