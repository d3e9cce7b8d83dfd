/**
 * The layer rule of ARCHITECTURE.md, enforced: every directory of `src/` has a layer in its
 * "Layers" table, and no file imports a file of a higher layer (imports within a layer, and
 * down, are free). Reads the table from ARCHITECTURE.md, so the document and the code cannot
 * drift apart; there is no exception list.
 */

import { dirname, join, relative } from "node:path";
import { assertEquals } from "../_asserts.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

/** The directory -> layer table of ARCHITECTURE.md (rows `| \`src/x/\` | N | ... |`). */
async function layerTable(): Promise<Map<string, number>> {
  const text = await Deno.readTextFile(join(ROOT, "ARCHITECTURE.md"));
  const table = new Map<string, number>();
  for (const m of text.matchAll(/^\|\s*`src\/([^`]*?)\/?`\s*\|\s*(\d+)\s*\|/gm)) {
    table.set(m[1], Number(m[2]));
  }
  return table;
}

/** Every .ts file under `dir`, relative to the repository root. */
async function sourceFiles(dir: string): Promise<string[]> {
  const files: string[] = [];
  for await (const entry of Deno.readDir(join(ROOT, dir))) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) files.push(...await sourceFiles(path));
    else if (entry.name.endsWith(".ts")) files.push(path);
  }
  return files.sort();
}

/** The relative module specifiers `source` imports (static, re-exports and dynamic). */
function relativeImports(source: string): string[] {
  const specifiers = [
    ...source.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*["'](\.[^"']+)["']/g),
    ...source.matchAll(/(?:^|\n)\s*import\s*["'](\.[^"']+)["']/g),
    ...source.matchAll(/\bimport\(\s*["'](\.[^"']+)["']\s*\)/g),
  ];
  return specifiers.map((m) => m[1]);
}

/** The `src/` directory (first level) of a repository path, or the file itself at the top. */
function area(path: string): string {
  const parts = path.split("/");
  return parts.length > 2 ? parts[1] : parts[1].replace(/\.ts$/, ".ts");
}

Deno.test("ARCHITECTURE.md gives every directory of src/ a layer", async () => {
  const table = await layerTable();
  const areas = new Set((await sourceFiles("src")).map(area));
  const missing = [...areas].filter((a) => !table.has(a));
  assertEquals(missing, [], `add these to the Layers table: ${missing.join(", ")}`);
});

Deno.test("no file of src/ imports a file of a higher layer", async () => {
  const table = await layerTable();
  const upward: string[] = [];
  for (const file of await sourceFiles("src")) {
    const from = area(file);
    for (const specifier of relativeImports(await Deno.readTextFile(join(ROOT, file)))) {
      const target = relative(ROOT, join(ROOT, dirname(file), specifier));
      if (!target.startsWith("src/")) continue;
      const to = area(target);
      if ((table.get(to) ?? Infinity) > (table.get(from) ?? -Infinity)) {
        upward.push(
          `${file} (${from}, layer ${table.get(from)}) -> ${target} (layer ${table.get(to)})`,
        );
      }
    }
  }
  assertEquals(upward, []);
});

Deno.test("the import parser sees static, re-export, side-effect and dynamic imports", () => {
  const source = [
    'import { a } from "./a.ts";',
    'import type {\n  B,\n} from "../b/b.ts";',
    'export { c } from "./c.ts";',
    'import "./d.ts";',
    'const e = await import("../e.ts");',
    'import { f } from "npm:f";',
  ].join("\n");
  assertEquals(relativeImports(source), ["./a.ts", "../b/b.ts", "./c.ts", "./d.ts", "../e.ts"]);
});
