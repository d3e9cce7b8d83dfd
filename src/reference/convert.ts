/**
 * CPU references of the 16-bit float decodings that `shaders/convert_to_f32.wgsl` does on the
 * GPU: IEEE binary16 (F16) and bfloat16 (BF16) to f32. Computed from the value formula (sign,
 * exponent, mantissa), not by moving bits, so they check the shader independently. NaNs come
 * out as the canonical NaN (payloads are not modelled).
 */

/** Decodes one float with `exponentBits` and `mantissaBits` (and a sign bit) from its bits. */
function decodeFloatBits(bits: number, exponentBits: number, mantissaBits: number): number {
  const bias = 2 ** (exponentBits - 1) - 1;
  const sign = (bits >> (exponentBits + mantissaBits)) & 1 ? -1 : 1;
  const exponent = (bits >> mantissaBits) & (2 ** exponentBits - 1);
  const mantissa = bits & (2 ** mantissaBits - 1);
  if (exponent === 2 ** exponentBits - 1) return mantissa ? NaN : sign * Infinity;
  if (exponent === 0) return sign * mantissa * 2 ** (1 - bias - mantissaBits);
  return sign * (1 + mantissa / 2 ** mantissaBits) * 2 ** (exponent - bias);
}

/** F16 bit patterns to f32 values. */
export function f16ToF32(bits: ArrayLike<number>): Float32Array<ArrayBuffer> {
  return Float32Array.from({ length: bits.length }, (_, i) => decodeFloatBits(bits[i], 5, 10));
}

/** BF16 bit patterns to f32 values. */
export function bf16ToF32(bits: ArrayLike<number>): Float32Array<ArrayBuffer> {
  return Float32Array.from({ length: bits.length }, (_, i) => decodeFloatBits(bits[i], 8, 7));
}
