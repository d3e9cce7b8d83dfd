/**
 * The weight hand-over from the trainer's policy to the explorer's: one command buffer of
 * GPU-side buffer copies, no readback. Both models must have the same architecture; each
 * model's `gpuLock` is held during the copy so neither is mid-step. Only what training moves is
 * copied (`trainableVariables`): every weight, or with a LoRA adapter the adapter alone, the
 * explorer's model being the trainer's frozen base with an adapter of its own (`cloneModel`).
 */

import { shapeSize } from "../graph/tensor.ts";
import type { PolicyModel } from "../model/policy.ts";

/**
 * Copies the trained variables of `from` into `to`'s of the same names on the GPU; `then` runs
 * while both locks are still held (e.g. to stamp the new policy version before another
 * generation batch can start).
 */
export async function copyWeights(
  from: PolicyModel,
  to: PolicyModel,
  then: () => void = () => {},
): Promise<void> {
  await from.gpuLock.run(() =>
    to.gpuLock.run(() => {
      const targets = new Map(to.trainableVariables().map((v) => [v.name, v]));
      const encoder = from.gpu.device.createCommandEncoder({ label: "weight-sync" });
      for (const source of from.trainableVariables()) {
        const target = targets.get(source.name);
        if (!target || shapeSize(target.shape) !== shapeSize(source.shape)) {
          throw new Error(
            `Cannot sync weights: the explorer's model has no trained variable "${source.name}" ` +
              `of shape [${source.shape}]`,
          );
        }
        encoder.copyBufferToBuffer(source.buffer, 0, target.buffer, 0, shapeSize(source.shape) * 4);
        to.gpu.variableTextures.written(target.buffer);
      }
      from.gpu.device.queue.submit([encoder.finish()]);
      then();
      return Promise.resolve();
    })
  );
}
