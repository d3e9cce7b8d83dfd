/**
 * Half-precision packing of f32 values on the host. bfloat16 (weights for the broadcast,
 * checkpoints written as the Hub ships them, frozen weights on the GPU): the top 16 bits of each
 * f32, rounded to nearest even (NaNs stay NaN), and back by appending 16 zero bits. IEEE binary16
 * (f16) through the runtime's Float16Array. Halves the bytes.
 */

/** `values` as bfloat16 bit patterns, rounded to nearest even. */
export function toBf16(values: Float32Array): Uint16Array<ArrayBuffer> {
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  const out = new Uint16Array(values.length);
  for (let i = 0; i < bits.length; i++) {
    const b = bits[i];
    if ((b & 0x7f800000) === 0x7f800000 && (b & 0x7fffff) !== 0) {
      out[i] = (b >>> 16) | 0x40; // NaN: keep it a NaN
    } else {
      out[i] = (b + 0x7fff + ((b >>> 16) & 1)) >>> 16;
    }
  }
  return out;
}

/** bfloat16 bit patterns widened to f32. */
export function fromBf16(bits: Uint16Array): Float32Array<ArrayBuffer> {
  const out = new Uint32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = bits[i] << 16;
  return new Float32Array(out.buffer);
}

/** `values` as IEEE binary16 bit patterns, rounded to nearest even. */
export function toF16(values: Float32Array): Uint16Array<ArrayBuffer> {
  return new Uint16Array(new Float16Array(values).buffer);
}

/** IEEE binary16 bit patterns widened to f32. */
export function fromF16(bits: Uint16Array): Float32Array<ArrayBuffer> {
  return Float32Array.from(new Float16Array(bits.buffer, bits.byteOffset, bits.length));
}
