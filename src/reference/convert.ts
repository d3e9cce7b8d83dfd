/**
 * CPU references of the 16-bit float conversions the GPU does: the decodings of
 * `shaders/convert_to_f32.wgsl` (IEEE binary16 (F16) and bfloat16 (BF16) to f32) and the
 * encodings of `shaders/convert_to_half.wgsl` (f32 to either, round to nearest even). Computed
 * from the value formula (sign, exponent, mantissa), not by moving bits, so they check the
 * shaders independently. NaNs come out as the canonical NaN (payloads are not modelled).
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

/**
 * f32 values to the bit patterns of a float with `exponentBits` and `mantissaBits`, rounded to
 * nearest, ties to even, from the value (not the bits): overflow to infinity, underflow through
 * subnormals to (signed) zero, NaN to the canonical quiet NaN of the format.
 */
function encodeFloatBits(value: number, exponentBits: number, mantissaBits: number): number {
  const bias = 2 ** (exponentBits - 1) - 1;
  const signBit = 2 ** (exponentBits + mantissaBits);
  const infinity = (2 ** exponentBits - 1) * 2 ** mantissaBits;
  if (Number.isNaN(value)) return infinity + 2 ** (mantissaBits - 1);
  const sign = value < 0 || Object.is(value, -0) ? signBit : 0;
  const magnitude = Math.abs(value);
  if (magnitude === Infinity) return sign + infinity;
  // The spacing of representable values around `magnitude`, never below the subnormals'.
  let exponent = Math.floor(Math.log2(magnitude || 1));
  if (2 ** exponent > magnitude) exponent--; // log2 rounded up just below a power of two
  if (2 ** (exponent + 1) <= magnitude) exponent++;
  exponent = Math.max(exponent, 1 - bias);
  const ulp = 2 ** (exponent - mantissaBits);
  let units = magnitude / ulp;
  const floor = Math.floor(units);
  units = units - floor > 0.5 || (units - floor === 0.5 && floor % 2 === 1) ? floor + 1 : floor;
  const bits = magnitude === 0 ? 0 : (exponent + bias - 1) * 2 ** mantissaBits + units;
  return sign + Math.min(bits, infinity);
}

/** f32 values to F16 bit patterns (round to nearest even). */
export function f32ToF16(values: ArrayLike<number>): Uint16Array<ArrayBuffer> {
  return Uint16Array.from({ length: values.length }, (_, i) => encodeFloatBits(values[i], 5, 10));
}

/** f32 values to BF16 bit patterns (round to nearest even). */
export function f32ToBf16(values: ArrayLike<number>): Uint16Array<ArrayBuffer> {
  return Uint16Array.from({ length: values.length }, (_, i) => encodeFloatBits(values[i], 8, 7));
}
