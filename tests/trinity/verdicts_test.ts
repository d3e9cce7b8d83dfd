/**
 * The verdict table covers the corpus: every YAML file of tests/trinity/configs (Trinity-RFT
 * v0.5.2's 55 example configs, and the later ones) has exactly one verdict, two-process pairs
 * name each other, and docs/trinity.md is the current table.
 */

import { assertEquals } from "../_asserts.ts";
import { ALL_VERDICTS, LATER_VERDICTS, V052_VERDICTS } from "./verdicts.ts";
import { TRINITY_DOC, trinityDocMarkdown } from "./render_verdicts.ts";
import { EXAMPLES, LATER } from "./_tree.ts";

/** The YAML files under `dir`, by path from `dir`. */
function yamlFiles(dir: string, prefix = ""): string[] {
  const found: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const path = `${prefix}${entry.name}`;
    if (entry.isDirectory) found.push(...yamlFiles(`${dir}/${entry.name}`, `${path}/`));
    else if (/\.ya?ml$/.test(entry.name)) found.push(path);
  }
  return found.sort();
}

Deno.test("every config of the corpus has one verdict, and v0.5.2's examples/ has its 55", () => {
  const v052 = yamlFiles(EXAMPLES, "examples/");
  assertEquals(v052.length, 55);
  assertEquals(Object.keys(V052_VERDICTS).sort(), v052);
  assertEquals(Object.keys(LATER_VERDICTS).sort(), yamlFiles(LATER, "later/"));
});

Deno.test("two-process configs name each other as partners", () => {
  for (const [path, verdict] of Object.entries(ALL_VERDICTS)) {
    if (verdict.kind !== "two_processes") continue;
    const partner = ALL_VERDICTS[verdict.partner];
    assertEquals(partner?.kind === "two_processes" && partner.partner, path);
  }
});

Deno.test("docs/trinity.md is the current verdict table (deno run -A tests/trinity/render_verdicts.ts)", () => {
  assertEquals(Deno.readTextFileSync(TRINITY_DOC), trinityDocMarkdown());
});
