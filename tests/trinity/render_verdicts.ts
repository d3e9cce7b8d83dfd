/**
 * docs/trinity.md: the table of every Trinity-RFT example config the tests run
 * (`verdicts.ts`) and what `./rft run` does with it. `verdicts_test.ts` checks that the file is
 * current; `deno run -A tests/trinity/render_verdicts.ts` rewrites it.
 */

import { LATER_VERDICTS, V052_VERDICTS, type Verdict } from "./verdicts.ts";

/** The path of the generated document. */
export const TRINITY_DOC = new URL("../../docs/trinity.md", import.meta.url).pathname;

/** What the run does, in words. */
function verdictText(verdict: Verdict): [string, string] {
  switch (verdict.kind) {
    case "runs":
      return ["runs", verdict.note];
    case "refuses":
      return [`refuses: needs ${verdict.system}`, "stops before any GPU work, exit 2, one line"];
    case "two_processes":
      return [`runs with ${verdict.partner}`, verdict.note];
  }
}

function table(verdicts: Readonly<Record<string, Verdict>>): string {
  const rows = ["| Config | Verdict | Note |", "| --- | --- | --- |"];
  for (const [path, verdict] of Object.entries(verdicts).sort(([a], [b]) => a.localeCompare(b))) {
    const [what, note] = verdictText(verdict);
    rows.push(`| ${path} | ${what} | ${note} |`);
  }
  return rows.join("\n") + "\n";
}

/** The document's text. */
export function trinityDocMarkdown(): string {
  const count = (vs: Readonly<Record<string, Verdict>>, kind: Verdict["kind"]) =>
    Object.values(vs).filter((v) => v.kind === kind).length;
  const v052 = Object.keys(V052_VERDICTS).length;
  return "# Trinity-RFT's example configs in rft\n\n" +
    "Generated from tests/trinity/verdicts.ts by `deno run -A tests/trinity/render_verdicts.ts`; " +
    "tests/trinity/trinity_examples_test.ts (and async_pair_test.ts for the two-process pairs) " +
    "asserts every row. Each config is copied unchanged into tests/trinity/configs " +
    "(SOURCES.md) and run as a Trinity user runs it, `./rft run examples/<folder>/<file>.yaml` " +
    "from the root of a Trinity-like tree, on a tiny random Qwen2.5-shaped model with the real " +
    "Qwen tokenizer and Hub-layout data; `--set` only shrinks steps, batch and lengths, or " +
    "names the authors' data. *runs*: to completion, with finite losses and a checkpoint; " +
    "*refuses*: it stops before any GPU work with one line naming the outside system it " +
    "needs, exit 2, nothing written. Trinity's path semantics hold: a relative path is read " +
    "from the working directory first, then from the config's folder.\n\n" +
    `## Trinity-RFT v0.5.2, examples/ (${v052} configs: ${
      count(V052_VERDICTS, "runs") + count(V052_VERDICTS, "two_processes")
    } run, ${count(V052_VERDICTS, "refuses")} refused)\n\n` +
    table(V052_VERDICTS) +
    "\n## Later releases (tests/trinity/configs/later)\n\n" + table(LATER_VERDICTS) +
    "\nThe component registries (algorithm types, losses, advantage fns, workflows, reward fns, " +
    "...) and what rft does with each name are in docs/config.md, *Trinity-RFT components*.\n";
}

if (import.meta.main) await Deno.writeTextFile(TRINITY_DOC, trinityDocMarkdown());
