/**
 * A minimal protobuf decoder, the reading twin of `protobuf_writer.ts`: walks the fields of one
 * message in order. No schema, no groups (wire types 3/4), varints only up to 2^53.
 */

/** One field of a message: a varint value, or the raw bytes of a fixed or length-delimited one. */
export type ProtoField =
  | { field: number; wireType: 0; value: number }
  | { field: number; wireType: 1 | 2 | 5; bytes: Uint8Array };

/** Yields the fields of `message` in order; throws on a truncated message or a group. */
export function* protoFields(message: Uint8Array): Generator<ProtoField> {
  let pos = 0;
  const varint = (): number => {
    let value = 0;
    for (let scale = 1;; scale *= 0x80) {
      if (pos >= message.length) throw new Error("Cannot decode protobuf: truncated varint");
      const byte = message[pos++];
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
    }
  };
  const take = (length: number): Uint8Array => {
    if (pos + length > message.length) {
      throw new Error(`Cannot decode protobuf: field of ${length} bytes runs past the end`);
    }
    return message.subarray(pos, pos += length);
  };
  while (pos < message.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wireType = key % 8;
    if (wireType === 0) yield { field, wireType, value: varint() };
    else if (wireType === 1) yield { field, wireType, bytes: take(8) };
    else if (wireType === 2) yield { field, wireType, bytes: take(varint()) };
    else if (wireType === 5) yield { field, wireType, bytes: take(4) };
    else throw new Error(`Cannot decode protobuf: unsupported wire type ${wireType}`);
  }
}
