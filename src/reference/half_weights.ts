/**
 * CPU reference of weights of 16-bit floats as the GPU kernels read them (`shaders/lib/
 * half_weights.wgsl`): f32 values rounded to nearest even to IEEE binary16 (f16) or bfloat16
 * (bf16) and packed two per u32, element 2i in the low half (the byte order of safetensors' F16
 * and BF16 tensors), and the values such words hold.
 */

import { toBf16, toF16 } from "../util/half.ts";
import { bf16ToF32, f16ToF32 } from "./convert.ts";

/** A 16-bit float format of packed weights. */
export type HalfFormat = "f16" | "bf16";

/** `values` (an even count) rounded to `format` and packed two per u32. */
export function packHalvesRef(
  values: ArrayLike<number>,
  format: HalfFormat,
): Uint32Array<ArrayBuffer> {
  if (values.length % 2 !== 0) {
    throw new Error(`Cannot pack ${values.length} values in pairs: expected an even count`);
  }
  const f32 = Float32Array.from(values);
  const bits = format === "f16" ? toF16(f32) : toBf16(f32);
  return new Uint32Array(bits.buffer as ArrayBuffer, bits.byteOffset, bits.length / 2);
}

/** The values packed words of `format` hold (two per word, low half first). */
export function unpackHalvesRef(words: Uint32Array, format: HalfFormat): Float32Array {
  const bits = new Uint16Array(words.buffer, words.byteOffset, 2 * words.length);
  return format === "f16" ? f16ToF32(bits) : bf16ToF32(bits);
}
