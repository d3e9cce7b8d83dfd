/** Decoding files that must be UTF-8 text (configs, datasets), with the line that is not. */

/** Thrown by {@link utf8Text}: the bytes are not UTF-8; `line` (1-based) is the first bad one. */
export class NotUtf8Error extends Error {
  constructor(readonly line: number) {
    super(`expected UTF-8 text, found bytes that are not UTF-8 on line ${line}`);
    this.name = "NotUtf8Error";
  }
}

/** `bytes` decoded as UTF-8; a {@link NotUtf8Error} naming the first line that is not. */
export function utf8Text(bytes: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    const lossy = new TextDecoder().decode(bytes);
    const at = lossy.indexOf("\uFFFD");
    throw new NotUtf8Error(lossy.slice(0, Math.max(at, 0)).split("\n").length);
  }
}
