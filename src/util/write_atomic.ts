/**
 * Crash-safe file writes: data goes to a temporary file beside the target, is synced, then
 * renamed over the target, so a reader sees the old file or the whole new one, never a part.
 */

/**
 * Writes `chunks` (or text) to `path` atomically; the error names the path. Chunks are taken one
 * at a time, so a (possibly async) generator may make each as it is written.
 */
export async function writeAtomic(
  path: string,
  chunks: Iterable<Uint8Array> | AsyncIterable<Uint8Array> | string,
): Promise<void> {
  const parts = typeof chunks === "string" ? [new TextEncoder().encode(chunks)] : chunks;
  const temp = `${path}.${crypto.randomUUID()}.tmp`;
  try {
    const file = await Deno.open(temp, { write: true, createNew: true });
    try {
      for await (const chunk of parts) {
        for (let done = 0; done < chunk.length;) done += await file.write(chunk.subarray(done));
      }
      await file.syncData();
    } finally {
      file.close();
    }
    await Deno.rename(temp, path);
  } catch (err) {
    await Deno.remove(temp).catch(() => {});
    throw new Error(`Cannot write ${path}: ${(err as Error).message}`, { cause: err });
  }
}
