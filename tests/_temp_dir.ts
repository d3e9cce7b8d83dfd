/** Runs test code in a fresh temporary directory. */

/** Runs `fn` in a new temporary directory named `<prefix>...`, removed afterwards. */
export async function inTempDir(
  prefix: string,
  fn: (dir: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
