/** Reads graph variables (parameters) back to the host in one readback. */

import { readBuffers } from "../gpu/readback.ts";
import { dataBytes, hostDataOf, shapeSize, type Variable } from "./tensor.ts";

/** The contents of `vars` by variable name as f32 (half types widened), in one readback. */
export async function readVariables(
  device: GPUDevice,
  vars: Iterable<Variable>,
): Promise<Map<string, Float32Array<ArrayBuffer>>> {
  const list = [...vars];
  const raw = await readBuffers(
    device,
    list.map((v) => ({ buffer: v.buffer, bytes: dataBytes(v.shape, v.dtype) })),
  );
  return new Map(
    list.map((
      v,
      i,
    ) => [v.name, hostDataOf(raw[i], v.dtype, shapeSize(v.shape)) as Float32Array<ArrayBuffer>]),
  );
}
