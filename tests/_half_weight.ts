/** Test helper: weights stored as bf16 / f16 on the test GPU, and the values they hold. */

import type { GpuContext } from "../src/gpu/device.ts";
import type { Variable } from "../src/graph/tensor.ts";
import { uploadTensor } from "../src/model/upload.ts";
import type { WeightFormat } from "../src/ops/weight_format.ts";
import { fromBf16, fromF16, toBf16, toF16 } from "../src/util/half.ts";

/** `values` as a weight stored in `format` holds them (rounded to halves, or as they are). */
export function storedValues(values: Float32Array, format: WeightFormat): Float32Array {
  if (format === "bf16") return fromBf16(toBf16(values));
  return format === "f16" ? fromF16(toF16(values)) : values;
}

/** A weight variable of `shape` holding `values` stored as `format`; the caller destroys it. */
export async function storedWeight(
  gpu: GpuContext,
  shape: number[],
  values: Float32Array<ArrayBuffer>,
  format: WeightFormat,
): Promise<Variable> {
  const raw = { name: "w", dtype: "F32" as const, shape, bytes: new Uint8Array(values.buffer) };
  return await uploadTensor(gpu, raw, format === "f32" ? {} : { storeAs: format });
}
