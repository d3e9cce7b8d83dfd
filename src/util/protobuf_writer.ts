/**
 * A minimal protobuf encoder: varint, fixed64 double, fixed32 float and length-delimited fields,
 * written in call order. No schema, no packed repeated fields, no negative varints; used for the
 * hand-written ONNX models of bench/ and the TensorBoard event files of src/monitor/.
 */

/** Writes protobuf fields in order; `finish()` returns the encoded message. */
export class ProtoWriter {
  readonly #bytes: number[] = [];

  /** A varint field (wire type 0): non-negative ints, enums, bools. */
  varint(field: number, value: number): this {
    this.#key(field, 0);
    this.#varint(value);
    return this;
  }

  /** A `double` field (wire type 1: fixed64, little-endian). */
  double(field: number, value: number): this {
    this.#key(field, 1);
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setFloat64(0, value, true);
    for (const byte of bytes) this.#bytes.push(byte);
    return this;
  }

  /** A `float` field (wire type 5: fixed32, little-endian); the value is rounded to float32. */
  float(field: number, value: number): this {
    this.#key(field, 5);
    const bytes = new Uint8Array(4);
    new DataView(bytes.buffer).setFloat32(0, value, true);
    for (const byte of bytes) this.#bytes.push(byte);
    return this;
  }

  /** A length-delimited field (wire type 2) holding raw bytes. */
  bytes(field: number, data: Uint8Array): this {
    this.lengthPrefix(field, data.length);
    for (const byte of data) this.#bytes.push(byte);
    return this;
  }

  /**
   * Only the key and length of a length-delimited field: the caller appends its `length` bytes
   * after `finish()`, so payloads too large to copy byte by byte (model weights) stay apart.
   */
  lengthPrefix(field: number, length: number): this {
    this.#key(field, 2);
    this.#varint(length);
    return this;
  }

  /** A UTF-8 string field. */
  string(field: number, text: string): this {
    return this.bytes(field, new TextEncoder().encode(text));
  }

  /** An embedded message field. */
  message(field: number, build: (w: ProtoWriter) => void): this {
    const inner = new ProtoWriter();
    build(inner);
    return this.bytes(field, inner.finish());
  }

  /** The encoded bytes. */
  finish(): Uint8Array<ArrayBuffer> {
    return Uint8Array.from(this.#bytes);
  }

  #key(field: number, wireType: number): void {
    this.#varint(field * 8 + wireType);
  }

  #varint(value: number): void {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new Error(`Cannot encode varint: expected a non-negative integer, received ${value}`);
    }
    let v = value;
    while (v >= 0x80) {
      this.#bytes.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    this.#bytes.push(v);
  }
}
