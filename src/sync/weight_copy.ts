/**
 * The weight hand-over from the trainer's policy to the explorer's: one command buffer of
 * GPU-side buffer copies, no readback. Both models must have the same architecture; each
 * model's `gpuLock` is held during the copy so neither is mid-step. When the trainer trains a
 * LoRA adapter, only the adapted weights move, merged on the GPU (`W + (alpha/r) B A`): the
 * frozen ones are the explorer's already, and the explorer generates at the base model's cost.
 */

import { shapeSize } from "../graph/tensor.ts";
import type { PolicyModel } from "../model/policy.ts";

/**
 * Copies every parameter of `from` into `to` on the GPU; `then` runs while both locks are still
 * held (e.g. to stamp the new policy version before another generation batch can start).
 */
export async function copyWeights(
  from: PolicyModel,
  to: PolicyModel,
  then: () => void = () => {},
): Promise<void> {
  await from.gpuLock.run(() =>
    to.gpuLock.run(async () => {
      if (from.lora) {
        await from.mergeLoraInto(to.params);
        then();
        return;
      }
      const encoder = from.gpu.device.createCommandEncoder({ label: "weight-sync" });
      for (const [name, source] of from.params) {
        const target = to.params.get(name);
        if (!target || shapeSize(target.shape) !== shapeSize(source.shape)) {
          throw new Error(
            `Cannot sync weights: the explorer's model has no parameter "${name}" of shape [${source.shape}]`,
          );
        }
        encoder.copyBufferToBuffer(source.buffer, 0, target.buffer, 0, shapeSize(source.shape) * 4);
      }
      from.gpu.device.queue.submit([encoder.finish()]);
      then();
    })
  );
}
