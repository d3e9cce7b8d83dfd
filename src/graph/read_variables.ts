/** Reads graph variables (parameters) back to the host in one readback. */

import { readBuffers } from "../gpu/readback.ts";
import { shapeSize, type Variable } from "./tensor.ts";

/** The f32 contents of `vars` by variable name, read in one readback. */
export async function readVariables(
  device: GPUDevice,
  vars: Iterable<Variable>,
): Promise<Map<string, Float32Array<ArrayBuffer>>> {
  const list = [...vars];
  const raw = await readBuffers(
    device,
    list.map((v) => ({ buffer: v.buffer, bytes: shapeSize(v.shape) * 4 })),
  );
  return new Map(list.map((v, i) => [v.name, new Float32Array(raw[i])]));
}
