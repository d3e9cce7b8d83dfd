/**
 * Reads WGSL sources from the repository's `shaders/` folder (one file per op). Sources are read
 * once and kept; `deno compile` must include the folder (`--include shaders/`).
 */

const SHADER_DIR = new URL("../../shaders/", import.meta.url);
const sources = new Map<string, string>();

/** Returns the text of `shaders/<stem>.wgsl`. */
export function shaderSource(stem: string): string {
  let text = sources.get(stem);
  if (text === undefined) {
    const url = new URL(`${stem}.wgsl`, SHADER_DIR);
    try {
      text = Deno.readTextFileSync(url);
    } catch (err) {
      throw new Error(
        `Cannot read shader "${stem}": ${url.pathname}: ${(err as Error).message}`,
      );
    }
    sources.set(stem, text);
  }
  return text;
}

/** Registers WGSL text under a stem without a file (tests use it to inject a broken kernel). */
export function defineShaderSource(stem: string, text: string): void {
  sources.set(stem, text);
}
