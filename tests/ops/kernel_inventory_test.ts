/**
 * Kernels as checked units, read from the sources (no GPU): every shader in `shaders/` is launched
 * by a file in `src/` whose header names it, its CPU reference and its test; that test exists and
 * imports both; every library in `shaders/lib/` is included; `shaders/README.md` lists exactly
 * this inventory. Each failure names the orphan or the file that disagrees.
 */

import assert from "node:assert/strict";
import { assertEquals } from "../_asserts.ts";

const ROOT = new URL("../../", import.meta.url);

/** The text of `path` (relative to the repository root). */
function read(path: string): string {
  return Deno.readTextFileSync(new URL(path, ROOT));
}

function exists(path: string): boolean {
  try {
    Deno.statSync(new URL(path, ROOT));
    return true;
  } catch {
    return false;
  }
}

/** Stems of the `.wgsl` files directly in `dir`, sorted. */
function wgslStems(dir: string): string[] {
  return [...Deno.readDirSync(new URL(dir, ROOT))]
    .filter((e) => e.isFile && e.name.endsWith(".wgsl"))
    .map((e) => e.name.slice(0, -".wgsl".length))
    .sort();
}

/** Every `.ts` file under `dir`, as a path relative to the root. */
function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(new URL(dir, ROOT))) {
    if (e.isDirectory) out.push(...tsFiles(`${dir}${e.name}/`));
    else if (e.name.endsWith(".ts")) out.push(`${dir}${e.name}`);
  }
  return out.sort();
}

/** A file that launches kernels, with what its header says about them. */
interface KernelFile {
  file: string;
  /** Shader stems the code launches (`shader: "x"` or `rowLaunch(gpu, "x", ...)`). */
  launched: string[];
  /** The header's `Shader(s):`, `Reference:` and `Test:` lines, split at commas. */
  shaders: string[];
  references: string[];
  tests: string[];
}

/** The values of header line `label` (e.g. `Test:`) of a file's first doc comment. */
function headerList(text: string, label: RegExp): string[] {
  const header = /^\/\*\*([\s\S]*?)\*\//.exec(text)?.[1] ?? "";
  const line = header.split("\n").map((l) => l.replace(/^\s*\* ?/, ""))
    .find((l) => label.test(l));
  return line ? line.replace(label, "").split(",").map((s) => s.trim()) : [];
}

/** Every file in `src/` that launches a shader. */
function kernelFiles(): KernelFile[] {
  return tsFiles("src/").flatMap((file): KernelFile[] => {
    const text = read(file);
    const launched = [
      ...text.matchAll(/\bshader:\s*"(\w+)"/g),
      ...text.matchAll(/\browLaunch\(\s*[\w.]+,\s*"(\w+)"/g),
    ].map((m) => m[1]);
    if (launched.length === 0) return [];
    return [{
      file,
      launched: [...new Set(launched)].sort(),
      shaders: headerList(text, /^Shaders?:\s*/),
      references: headerList(text, /^Reference:\s*/),
      tests: headerList(text, /^Test:\s*/),
    }];
  });
}

/** Entry points (`@compute ... fn name`) of a WGSL file, then of the libraries it includes. */
function entryPoints(path: string): string[] {
  const own = [...read(path).matchAll(/@compute\s+@workgroup_size\([^)]*\)\s*fn\s+(\w+)/g)]
    .map((m) => m[1]);
  return [...own, ...includes(path).flatMap((lib) => entryPoints(`shaders/lib/${lib}.wgsl`))];
}

/** Libraries a WGSL file includes with `// #include NAME`. */
function includes(path: string): string[] {
  return [...read(path).matchAll(/^\s*\/\/\s*#include\s+(\w+)\s*$/gm)].map((m) => m[1]);
}

/** Whether the test at `testPath` imports the source file `srcPath` (both root-relative). */
function imports(testPath: string, srcPath: string): boolean {
  const target = new URL(srcPath, ROOT).href;
  return [...read(testPath).matchAll(/from\s+"([^"]+)"/g)]
    .some((m) => new URL(m[1], new URL(testPath, ROOT)).href === target);
}

Deno.test("every kernel file's header names its shaders, an existing reference and test", () => {
  for (const k of kernelFiles()) {
    assertEquals(
      k.shaders.slice().sort(),
      k.launched.map((s) => `shaders/${s}.wgsl`),
      `${k.file}: the header's "Shader:" line must list the shaders the file launches`,
    );
    assert(k.references.length > 0, `${k.file}: the header has no "Reference:" line`);
    assert(k.tests.length > 0, `${k.file}: the header has no "Test:" line`);
    for (const path of [...k.shaders, ...k.references, ...k.tests]) {
      assert(exists(path), `${k.file}: its header names ${path}, which does not exist`);
    }
    for (const test of k.tests) {
      assert(imports(test, k.file), `${k.file}: its test ${test} does not import it`);
      for (const ref of k.references) {
        assert(imports(test, ref), `${k.file}: its test ${test} does not import ${ref}`);
      }
    }
  }
});

Deno.test("every shader in shaders/ is launched by an op, and every launch has its shader", () => {
  const launched = new Set(kernelFiles().flatMap((k) => k.launched));
  for (const stem of wgslStems("shaders/")) {
    assert(launched.has(stem), `shaders/${stem}.wgsl is an orphan: no file in src/ launches it`);
  }
  for (const stem of launched) {
    assert(
      exists(`shaders/${stem}.wgsl`),
      `src/ launches "${stem}", but shaders/${stem}.wgsl is missing`,
    );
  }
});

Deno.test("every library in shaders/lib/ is included by a shader, and every include exists", () => {
  const included = new Set(wgslStems("shaders/").flatMap((s) => includes(`shaders/${s}.wgsl`)));
  for (const lib of wgslStems("shaders/lib/")) {
    assert(included.has(lib), `shaders/lib/${lib}.wgsl is an orphan: no shader includes it`);
  }
  for (const lib of included) {
    assert(exists(`shaders/lib/${lib}.wgsl`), `a shader includes "${lib}", which is missing`);
  }
});

/** The rows `shaders/README.md` must hold: one per shader, then one per library. */
function expectedReadmeRows(): string[] {
  const files = kernelFiles();
  const shaderRows = wgslStems("shaders/").map((stem) => {
    const path = `shaders/${stem}.wgsl`;
    const k = files.find((f) => f.launched.includes(stem));
    return [
      path,
      entryPoints(path).join(", "),
      k?.file ?? "",
      k?.references.join(", ") ?? "",
      k?.tests.join(", ") ?? "",
    ];
  });
  const libRows = wgslStems("shaders/lib/").map((lib) => [
    `shaders/lib/${lib}.wgsl`,
    wgslStems("shaders/").filter((s) => includes(`shaders/${s}.wgsl`).includes(lib))
      .map((s) => `shaders/${s}.wgsl`).join(", "),
  ]);
  return [...shaderRows, ...libRows].map((cells) => `| ${cells.join(" | ")} |`);
}

Deno.test("shaders/README.md tables list every shader and library as the sources say", () => {
  const rows = read("shaders/README.md").split("\n")
    .filter((l) => /^\|\s*`?shaders\//.test(l))
    .map((l) =>
      `| ${l.split("|").slice(1, -1).map((c) => c.trim().replaceAll("`", "")).join(" | ")} |`
    );
  const expected = expectedReadmeRows();
  for (const row of expected) {
    assert(rows.includes(row), `shaders/README.md lacks or differs from the row\n${row}`);
  }
  for (const row of rows) {
    assert(
      expected.includes(row),
      `shaders/README.md has a row the sources do not support\n${row}`,
    );
  }
});
