/** Test helper: a weight variable on the test GPU, as the model's weights are made. */

import { getGpu } from "../src/gpu/device.ts";
import type { Variable } from "../src/graph/tensor.ts";

/** A weight variable holding `data` (COPY_SRC, as the model's weights are). */
export async function weightVariable(
  name: string,
  shape: number[],
  data: Float32Array<ArrayBuffer>,
): Promise<Variable> {
  const gpu = await getGpu();
  const buffer = gpu.device.createBuffer({
    size: data.length * 4,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
  });
  gpu.device.queue.writeBuffer(buffer, 0, data);
  return { name, shape, dtype: "f32", buffer };
}
