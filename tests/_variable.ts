/** Test helper: a variable on the test GPU, made as the model's weights and caches are. */

import { getGpu } from "../src/gpu/device.ts";
import type { Variable } from "../src/graph/tensor.ts";

/** A variable of `shape` holding `data` (COPY_SRC, as the model's are), on a buffer the caller destroys. */
export async function makeVariable(
  name: string,
  shape: number[],
  data: Float32Array<ArrayBuffer>,
): Promise<Variable> {
  const gpu = await getGpu();
  const buffer = gpu.device.createBuffer({
    label: name,
    size: data.length * 4,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
  });
  gpu.device.queue.writeBuffer(buffer, 0, data);
  return { name, shape, dtype: "f32", buffer };
}
