/**
 * Reads graph variables (parameters) back to the host: in one readback, or piece by piece for a
 * writer that streams them (a checkpoint), so that a large weight never has a whole host copy.
 */

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

/** Bytes of one piece {@link readVariablePieces} reads back (a multiple of 4). */
export const READ_PIECE_BYTES = 64 * 2 ** 20;

/**
 * The contents of `vars`, in order, as f32 pieces (half types widened) of at most `pieceBytes`
 * of the stored data each, each piece read back when the caller asks for it.
 */
export async function* readVariablePieces(
  device: GPUDevice,
  vars: Iterable<Variable>,
  pieceBytes = READ_PIECE_BYTES,
): AsyncGenerator<Float32Array<ArrayBuffer>> {
  for (const v of vars) {
    const total = dataBytes(v.shape, v.dtype);
    const valueBytes = v.dtype === "bf16" || v.dtype === "f16" ? 2 : 4;
    let left = shapeSize(v.shape); // halves' data ends in a padding half when the count is odd
    for (let offset = 0; offset < total; offset += pieceBytes) {
      const bytes = Math.min(pieceBytes, total - offset);
      const count = Math.min(left, bytes / valueBytes);
      left -= count;
      const [raw] = await readBuffers(device, [{ buffer: v.buffer, bytes, offset }]);
      yield hostDataOf(raw, v.dtype, count) as Float32Array<ArrayBuffer>;
    }
  }
}
