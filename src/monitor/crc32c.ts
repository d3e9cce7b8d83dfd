/**
 * CRC32C (Castagnoli polynomial, reflected 0x82F63B78), table-driven one byte at a time, and the
 * masked form TFRecord files store. Not the zlib CRC32; no hardware acceleration.
 */

const TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** The CRC32C of `data` as an unsigned 32-bit number (`crc32c("123456789")` is 0xE3069283). */
export function crc32c(data: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of data) crc = TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** The masked CRC32C TFRecord stores: `((crc >>> 15) | (crc << 17)) + 0xa282ead8`, mod 2^32. */
export function maskedCrc32c(data: Uint8Array): number {
  const crc = crc32c(data);
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) >>> 0;
}
