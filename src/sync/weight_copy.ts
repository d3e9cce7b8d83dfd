/**
 * The weight hand-over from the trainer's policy to the explorer's: one command buffer of
 * GPU-side buffer copies (or narrowings into the explorer's half-precision weights), no readback. Both models must have the same architecture; each
 * model's `gpuLock` is held during the copy so neither is mid-step. Only what training moves is
 * copied (`trainableVariables`): every weight, or with a LoRA adapter the adapter alone, the
 * explorer's model being the trainer's frozen base with an adapter of its own (`cloneModel`).
 */

import type { PolicyModel } from "../model/policy.ts";
import { transferWeights } from "../model/weight_transfer.ts";

/**
 * Copies the trained variables of `from` into `to`'s of the same names on the GPU (narrowed when
 * `to` holds them in half precision); `then` runs while both locks are still held (e.g. to stamp
 * the new policy version before another generation batch can start).
 */
export async function copyWeights(
  from: PolicyModel,
  to: PolicyModel,
  then: () => void = () => {},
): Promise<void> {
  await from.gpuLock.run(() =>
    to.gpuLock.run(async () => {
      await transferWeights(from.trainableVariables(), to.trainableVariables(), from.gpu);
      then();
    })
  );
}
