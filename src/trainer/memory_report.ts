/**
 * What a run keeps on the GPU for its policy, computed from the model's shape alone: the
 * trainer's f32 weights, the adapter's when training LoRA, one f32 gradient and two AdamW
 * moments per trainable parameter, and the explorer's (and a KL reference's) f32 copy of the
 * weights; with LoRA a copy is the adapter's alone, the base being shared. Activations and
 * compiled graphs' buffers are not counted: they depend on the batch. Shows why LoRA fits: the
 * gradients and moments shrink to the adapter's size.
 */

import type { ModelConfig } from "../model/hf_config.ts";
import { type LoraSettings, loraTargets } from "../model/lora.ts";
import { parameterSpecs } from "../model/parameters.ts";
import { shapeSize } from "../graph/tensor.ts";

/** Parameter counts and bytes of one policy setup. */
export interface MemoryReport {
  /** Parameters of the model (the base, when training LoRA). */
  parameters: number;
  /** Parameters the optimizer updates: all of them, or the adapter's. */
  trainableParameters: number;
  /** The trainer's weights, adapter included. */
  weightBytes: number;
  /** One f32 gradient per trainable parameter. */
  gradientBytes: number;
  /** AdamW's first and second moments. */
  optimizerBytes: number;
  /** The explorer's copy of the weights (of the adapter) and, when counted, the KL reference's. */
  copyBytes: number;
  totalBytes: number;
}

/** Options of {@link memoryReport}. */
export interface MemoryReportOptions {
  /** The adapter trained instead of all weights. */
  lora?: LoraSettings;
  /**
   * Model copies besides the trainer's (explorer, reference); default 1 (the explorer's). With
   * `lora` each is an adapter over the shared base.
   */
  copies?: number;
}

/** The memory report of a policy with config `cfg` (see the file comment). */
export function memoryReport(cfg: ModelConfig, options: MemoryReportOptions = {}): MemoryReport {
  const parameters = parameterSpecs(cfg).reduce((n, spec) => n + shapeSize(spec.shape), 0);
  const { lora, copies = 1 } = options;
  const adapter = lora
    ? loraTargets(cfg, lora.targetModules).reduce((n, t) => n + lora.rank * (t.inDim + t.outDim), 0)
    : 0;
  const trainableParameters = lora ? adapter : parameters;
  const weightBytes = 4 * (parameters + adapter);
  const gradientBytes = 4 * trainableParameters;
  const optimizerBytes = 8 * trainableParameters;
  const copyBytes = 4 * (lora ? adapter : parameters) * copies;
  return {
    parameters,
    trainableParameters,
    weightBytes,
    gradientBytes,
    optimizerBytes,
    copyBytes,
    totalBytes: weightBytes + gradientBytes + optimizerBytes + copyBytes,
  };
}

/** The report as one log line. */
export function formatMemoryReport(r: MemoryReport): string {
  const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  const pct = (100 * r.trainableParameters / r.parameters).toPrecision(3);
  return `memory: ${r.parameters} parameters, ${r.trainableParameters} trainable (${pct}%); ` +
    `weights ${mb(r.weightBytes)}, gradients ${mb(r.gradientBytes)}, optimizer ${
      mb(r.optimizerBytes)
    }, model copies ${mb(r.copyBytes)}; total ${mb(r.totalBytes)} (activations not counted)`;
}
