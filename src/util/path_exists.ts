/**
 * Whether a path exists, for callers that branch on an optional file (a sharded index, a
 * checkpoint's optional part). Only "not found" means no; any other error (permission, I/O) is
 * thrown. Does not say what kind of entry it is.
 */

/** Whether `path` exists; throws on errors other than NotFound. */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}
