/**
 * Validate mode (`RFT_VALIDATE=1`, after tinygrad's): a compiled graph runs one op at a time, and
 * each op with a CPU reference (`OpDef.reference`) has its output compared with the reference
 * computed from the inputs the GPU gave it; the first mismatch throws, naming the op, the tensor
 * and the element. Ops without a reference, or touching a tensor above `VALIDATE_MAX_ELEMENTS`,
 * run unchecked. A readback per op: for debugging on small shapes, never for speed.
 */

import { encodeDispatches, type PreparedDispatch } from "../gpu/dispatch.ts";
import type { GpuContext } from "../gpu/device.ts";
import { readBuffers } from "../gpu/readback.ts";
import { inputsOf } from "./schedule.ts";
import { type HostData, hostDataOf, type Tensor } from "./tensor.ts";

/** Whether validate mode is on (`RFT_VALIDATE=1`); read at every run. */
export function validateEnabled(): boolean {
  return Deno.env.get("RFT_VALIDATE") === "1";
}

/** Ops whose inputs or output hold more elements than this run unchecked. */
export const VALIDATE_MAX_ELEMENTS = 1 << 16;

/** f32 outputs match when |gpu - reference| <= atol + rtol * |reference|; integers exactly. */
export const VALIDATE_TOLERANCE = { atol: 1e-4, rtol: 1e-3 };

/** An op node of a compiled graph with the dispatches that compute it, in order. */
export interface OpStep {
  node: Tensor;
  dispatches: readonly PreparedDispatch[];
}

/** What one validated run compared: op names, in run order. */
export interface ValidationReport {
  checked: string[];
  unchecked: string[];
}

/** A description of the first element where `got` and `want` differ, or undefined. */
function firstMismatch(got: HostData, want: ArrayLike<number>, exact: boolean): string | undefined {
  if (got.length !== want.length) {
    return `the reference gives ${want.length} values, the GPU ${got.length}`;
  }
  const { atol, rtol } = VALIDATE_TOLERANCE;
  for (let i = 0; i < got.length; i++) {
    const [g, w] = [got[i], want[i]];
    if (g === w || (Number.isNaN(g) && Number.isNaN(w))) continue;
    if (!exact && Math.abs(g - w) <= atol + rtol * Math.abs(w)) continue;
    return `at index ${i}: GPU ${g}, reference ${w}` +
      (exact ? " (integers compare exactly)" : ` (tolerance ${atol} + ${rtol} * |reference|)`);
  }
  return undefined;
}

/**
 * Runs `steps` one op at a time (after the commands `first` records, e.g. input copies, and
 * before those `last` records), checking each op that has a reference; throws at the first
 * mismatch. `bufferOf` gives the buffer holding a tensor.
 */
export async function runValidated(
  gpu: GpuContext,
  label: string,
  steps: readonly OpStep[],
  bufferOf: (t: Tensor) => GPUBuffer,
  first: (encoder: GPUCommandEncoder) => void,
  last?: (encoder: GPUCommandEncoder) => void,
): Promise<ValidationReport> {
  const { device } = gpu;
  const read = async (tensors: readonly Tensor[]) =>
    (await readBuffers(
      device,
      tensors.map((t) => ({ buffer: bufferOf(t), bytes: t.bytes })),
    )).map((bytes, i) => hostDataOf(bytes, tensors[i].dtype, tensors[i].size));
  const submit = (record: (encoder: GPUCommandEncoder) => void) => {
    const encoder = device.createCommandEncoder({ label });
    record(encoder);
    device.queue.submit([encoder.finish()]);
  };
  submit(first);
  const report: ValidationReport = { checked: [], unchecked: [] };
  for (const { node, dispatches } of steps) {
    if (node.source.kind !== "op") continue;
    const { op, attrs } = node.source;
    const inputs = inputsOf(node);
    const small = [node, ...inputs].every((t) => t.size <= VALIDATE_MAX_ELEMENTS);
    if (!op.reference || !small) {
      submit((encoder) => encodeDispatches(encoder, dispatches, label));
      report.unchecked.push(op.name);
      continue;
    }
    // Inputs are read before the op runs: an in-place op overwrites its input.
    const data = await read(inputs);
    submit((encoder) => encodeDispatches(encoder, dispatches, label));
    const [got] = await read([node]);
    const mismatch = firstMismatch(got, op.reference(data, inputs, attrs), node.dtype !== "f32");
    if (mismatch) {
      throw new Error(
        `RFT_VALIDATE: op "${op.name}" -> ${node} in graph "${label}" differs from its CPU ` +
          `reference ${mismatch}`,
      );
    }
    report.checked.push(op.name);
  }
  if (last) submit(last);
  return report;
}
