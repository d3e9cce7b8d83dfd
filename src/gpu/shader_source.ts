/**
 * Reads WGSL sources from the repository's `shaders/` folder (one file per op). WGSL has no
 * imports: a line `// #include NAME` appends `shaders/lib/NAME.wgsl` once at the end of the module
 * (module-scope declarations may come in any order), so the including file's line numbers stay
 * exact and `shaderLocation` maps a line of the assembled text back to its file. Sources are read
 * once and kept; `deno compile` must include the folder (`--include shaders/`).
 */

const SHADER_DIR = new URL("../../shaders/", import.meta.url);
const INCLUDE = /^\s*\/\/\s*#include\s+([A-Za-z0-9_]+)\s*$/;

/** An assembled shader: its text and where each included library starts. */
interface Assembled {
  text: string;
  /** [first line (1-based) in `text`, file] of each part, in order; the first is the shader. */
  parts: [number, string][];
}

const sources = new Map<string, Assembled>();

function readShaderFile(path: string, what: string): string {
  const url = new URL(path, SHADER_DIR);
  try {
    return Deno.readTextFileSync(url);
  } catch (err) {
    throw new Error(`Cannot read ${what}: ${url.pathname}: ${(err as Error).message}`);
  }
}

/** Appends the libraries `text` includes (each once) and records where each part starts. */
function assemble(stem: string, text: string): Assembled {
  const parts: [number, string][] = [[1, `shaders/${stem}.wgsl`]];
  let out = text.endsWith("\n") ? text : `${text}\n`;
  const included = new Set<string>();
  for (const line of text.split("\n")) {
    const name = INCLUDE.exec(line)?.[1];
    if (!name || included.has(name)) continue;
    included.add(name);
    parts.push([out.split("\n").length, `shaders/lib/${name}.wgsl`]);
    out += readShaderFile(`lib/${name}.wgsl`, `shader library "${name}" (included by ${stem})`);
    if (!out.endsWith("\n")) out += "\n";
  }
  return { text: out, parts };
}

function assembled(stem: string): Assembled {
  let source = sources.get(stem);
  if (!source) {
    source = assemble(stem, readShaderFile(`${stem}.wgsl`, `shader "${stem}"`));
    sources.set(stem, source);
  }
  return source;
}

/** The text of `shaders/<stem>.wgsl` with its `// #include` libraries appended. */
export function shaderSource(stem: string): string {
  return assembled(stem).text;
}

/** `file:line` of line `line` (1-based) of the assembled source of `stem`. */
export function shaderLocation(stem: string, line: number): string {
  const { parts } = assembled(stem);
  let [start, file] = parts[0];
  for (const [partStart, partFile] of parts) {
    if (partStart <= line) [start, file] = [partStart, partFile];
  }
  return `${file}:${line - start + 1}`;
}

/** Registers WGSL text under a stem without a file (tests use it to inject a broken kernel). */
export function defineShaderSource(stem: string, text: string): void {
  sources.set(stem, assemble(stem, text));
}
