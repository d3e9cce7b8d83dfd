/**
 * The compute dispatches of a batch-1 greedy decode step on the GPU path, counted on any adapter:
 * the adapter is presented as a GPU (not a CPU fallback), so that the decode graph takes the
 * kernels a GPU gets (the GEMV kernels and their fusions); run it with `RFT_AUTOTUNE=0` (each
 * class's default kernel, nothing timed). A model of the shape's layers and one of a layer more
 * (random weights) each decode a few tokens; the step's dispatches are counted as WebGPU records
 * them, per layer from the difference, with the kernels of one layer. Prints the figures and
 * writes no report.
 *
 * Usage: RFT_AUTOTUNE=0 deno run -A bench/decode_dispatches.ts [--model tiny] [--layers 2]
 */

import { getGpu, type GpuContext } from "../src/gpu/device.ts";
import { parseHfConfig } from "../src/model/hf_config.ts";
import { initParameters } from "../src/model/init.ts";
import { createModel } from "../src/model/policy.ts";
import { benchArgs, integerFlag } from "./_flags.ts";
import { modelShape } from "./_model_shapes.ts";

const SCRIPT = "bench/decode_dispatches.ts";

/** Tokens generated per count: the later steps are decode steps of one token row. */
const TOKENS = 4;

/** `gpu` presented as a GPU: its graphs take the kernels GPUs get. */
export function presentedAsGpu(gpu: GpuContext): GpuContext {
  return { ...gpu, summary: { ...gpu.summary, isFallback: false } };
}

/**
 * The pipelines (kernel keys) of the compute dispatches WebGPU records while `run` runs, in
 * order.
 */
export async function recordedDispatches(run: () => Promise<unknown>): Promise<string[]> {
  const labels: string[] = [];
  const pass = GPUComputePassEncoder.prototype;
  const { setPipeline, dispatchWorkgroups } = pass;
  const pipelines = new WeakMap<GPUComputePassEncoder, string>();
  pass.setPipeline = function (pipeline) {
    pipelines.set(this, pipeline.label);
    return setPipeline.call(this, pipeline);
  };
  pass.dispatchWorkgroups = function (x, y, z) {
    labels.push(pipelines.get(this) ?? "");
    return dispatchWorkgroups.call(this, x, y, z);
  };
  try {
    await run();
  } finally {
    Object.assign(pass, { setPipeline, dispatchWorkgroups });
  }
  return labels;
}

/**
 * The kernels of one greedy decode step of one prompt by a model of config `raw` (random
 * weights) on `gpu`: the dispatches of a call of {@link TOKENS} tokens less those of a call of
 * one (prefill only), per decode step.
 */
export async function decodeStepKernels(
  raw: Record<string, unknown>,
  gpu: GpuContext,
): Promise<string[]> {
  const model = await createModel(raw, initParameters(parseHfConfig(raw), 3, 0.02), { gpu });
  try {
    const prompt = [[1, 2, 3, 4, 5]];
    const greedy = (maxTokens: number) =>
      model.generate(prompt, { temperature: 0, maxTokens, stop: [] });
    await greedy(TOKENS); // compiles the graphs
    const prefill = await recordedDispatches(() => greedy(1));
    const steps = model.generationStats!.decodeSteps;
    const all = await recordedDispatches(() => greedy(TOKENS));
    const decodeSteps = model.generationStats!.decodeSteps - steps;
    const step = all.slice(prefill.length);
    if (step.length % decodeSteps !== 0) {
      throw new Error(`Cannot count: ${step.length} dispatches over ${decodeSteps} decode steps`);
    }
    return step.slice(0, step.length / decodeSteps);
  } finally {
    model.destroy();
  }
}

/** A decode step's dispatches with `layers` layers, per layer, and one layer's kernels. */
export async function decodeDispatches(
  shape: Record<string, unknown>,
  layers: number,
  gpu: GpuContext,
): Promise<{ perStep: number; perLayer: number; layerKernels: string[] }> {
  const kernels = (n: number) => decodeStepKernels({ ...shape, num_hidden_layers: n }, gpu);
  const [step, longer] = [await kernels(layers), await kernels(layers + 1)];
  const perLayer = longer.length - step.length;
  // The first layer's kernels follow the embedding's one dispatch.
  return { perStep: step.length, perLayer, layerKernels: step.slice(1, 1 + perLayer) };
}

if (import.meta.main) {
  const { values } = benchArgs(SCRIPT, {
    args: Deno.args,
    options: { model: { type: "string", default: "tiny" }, layers: { type: "string" } },
  });
  const shape = modelShape(values.model);
  const layers = values.layers
    ? integerFlag(SCRIPT, "layers", values.layers)
    : shape.num_hidden_layers as number;
  const gpu = presentedAsGpu(await getGpu());
  const { perStep, perLayer, layerKernels } = await decodeDispatches(shape, layers, gpu);
  console.log(`${values.model}, ${layers} layers, batch 1, the adapter presented as a GPU`);
  console.log(`dispatches per decode step: ${perStep}; per decoder layer: ${perLayer}`);
  console.log(`one layer's kernels: ${layerKernels.map((k) => k.split(":")[0]).join(", ")}`);
}
