/**
 * Weights moved between two models of one architecture on the GPU, no readback: a copy of a
 * model with its matrices in another dtype (the explorer's bf16 copy of the trainer's f32
 * weights, as vLLM serves a policy in `dtype: bfloat16`), and the refresh of such a copy from its
 * source (each weight sync). A target of the source's dtype is copied buffer to buffer; a
 * half-precision one is narrowed by `half_copy.ts`'s launch.
 */

import { TENSOR_USAGE } from "../gpu/buffer_pool.ts";
import { encodeDispatches, releaseDispatch } from "../gpu/dispatch.ts";
import { dataBytes, sameShape, type Variable } from "../graph/tensor.ts";
import { narrowingDispatch } from "./half_copy.ts";
import { PolicyModel } from "./policy.ts";

/** The dtypes a model's matrices may have: f32, or a half-precision format. */
export type WeightDtype = "f32" | "bf16" | "f16";

/** The dtype `model` holds its matrices in (f32 when it has none). */
export function matricesDtype(model: PolicyModel): WeightDtype {
  const matrix = model.variables().find((v) => v.shape.length === 2);
  return matrix?.dtype === "bf16" || matrix?.dtype === "f16" ? matrix.dtype : "f32";
}

/**
 * Writes every source variable into the target of the same name and shape (in one command
 * buffer, submitted; nothing waits for it): copies where the dtypes agree, narrowing where the
 * target is half. Tells the device's variable textures that the targets changed.
 */
export async function transferWeights(
  sources: readonly Variable[],
  targets: readonly Variable[],
  gpu: PolicyModel["gpu"],
): Promise<void> {
  const byName = new Map(targets.map((v) => [v.name, v]));
  const encoder = gpu.device.createCommandEncoder({ label: "weight-transfer" });
  const narrowing = [];
  for (const source of sources) {
    const target = byName.get(source.name);
    if (!target || !sameShape(target.shape, source.shape)) {
      throw new Error(
        `Cannot sync weights: the explorer's model has no trained variable "${source.name}" ` +
          `of shape [${source.shape}]`,
      );
    }
    if (target.dtype === source.dtype) {
      encoder.copyBufferToBuffer(
        source.buffer,
        0,
        target.buffer,
        0,
        dataBytes(source.shape, source.dtype),
      );
    } else {
      narrowing.push(await narrowingDispatch(gpu, source, target));
    }
    gpu.variableTextures.written(target.buffer);
  }
  encodeDispatches(encoder, narrowing, "weight-transfer");
  gpu.device.queue.submit([encoder.finish()]);
  narrowing.forEach(releaseDispatch);
}

/**
 * A model with `model`'s architecture, tokenizer and current weights, its matrices stored as
 * `dtype` (vectors, e.g. norm weights, stay f32), made on the GPU. The caller holds `model`'s
 * `gpuLock`.
 */
export async function copyModel(model: PolicyModel, dtype: WeightDtype): Promise<PolicyModel> {
  const sources = model.variables();
  const targets = sources.map((v): Variable => {
    const stored = v.shape.length === 2 ? dtype : "f32";
    return {
      name: v.name,
      shape: v.shape,
      dtype: stored,
      buffer: model.gpu.device.createBuffer({
        label: v.name,
        size: Math.max(4, dataBytes(v.shape, stored)),
        usage: TENSOR_USAGE,
      }),
    };
  });
  await transferWeights(sources, targets, model.gpu);
  const params = new Map(targets.map((v) => [v.name, v]));
  return new PolicyModel(
    model.gpu,
    model.rawConfig,
    model.config,
    params,
    model.tokenizer,
    model.sideFiles,
  );
}
