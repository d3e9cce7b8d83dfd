/**
 * The config reference as Markdown tables, generated from the schema: one row per key with
 * its type, default and description; then every Trinity-RFT key with its status in rft. A part of the schema used in several places (the taskset
 * keys of `eval_tasksets`, the top-level keys of a stage) is listed once, where it first appears.
 */

import { CONFIG_SCHEMA, type FieldSchema } from "./schema.ts";
import { trinityKeyStatuses } from "./trinity_status.ts";
import { TRINITY_LATER, TRINITY_V052, type TrinityRegistry } from "./trinity_names.ts";
import { trinityComponentStatus } from "./trinity_registry.ts";
import { expectedText } from "./validate.ts";

/**
 * The reference table of every config key.
 *
 * @example
 * ```ts
 * console.log(configReferenceMarkdown());
 * ```
 */
export function configReferenceMarkdown(): string {
  const rows = ["| Key | Type | Default | Description |", "| --- | --- | --- | --- |"];
  const listedAt = new Map<FieldSchema, string>();
  const visit = (field: FieldSchema, path: string) => {
    listedAt.set(field, path);
    if (path) rows.push(row(path, typeText(field, listedAt), defaultText(field), field.doc));
    if (field.type === "section") {
      for (const [key, child] of Object.entries(field.fields)) {
        if (!listedAt.has(child)) visit(child, path ? `${path}.${key}` : key);
      }
    } else if (field.type === "list" && field.of.type === "section" && !listedAt.has(field.of)) {
      visit(field.of, `${path}[]`);
    }
  };
  visit(CONFIG_SCHEMA, "");
  return rows.join("\n") + "\n";
}

/**
 * The table of every key of Trinity-RFT's schema with its status in rft: implemented (the
 * table above has it), mapped (read as rft keys, or accepted only at Trinity's default),
 * ignored (dropped, listed in the `ignored Trinity keys:` warning line at start).
 */
export function trinityKeysMarkdown(): string {
  const rows = ["| Trinity key | Status in rft | Note |", "| --- | --- | --- |"];
  for (const [path, { status, note }] of trinityKeyStatuses()) {
    // A stage's keys are the top-level keys of the same name, listed once above.
    if (path.startsWith("stages[].") && path !== "stages[].stage_name") continue;
    rows.push(row(path, status, note));
  }
  return rows.join("\n") + "\n";
}

/**
 * The table of every name in Trinity-RFT's component registries (v0.5.2's, then those later
 * releases added) with its status in rft: implemented (with how it differs, when it does),
 * refused (the outside system it needs, named in one line at load) or missing (why).
 */
export function trinityComponentsMarkdown(): string {
  const rows = [
    "| Trinity registry | Name | Release | Status in rft | Note |",
    "| --- | --- | --- | --- | --- |",
  ];
  for (const [release, table] of [["v0.5.2", TRINITY_V052], ["later", TRINITY_LATER]] as const) {
    for (const [registry, names] of Object.entries(table)) {
      for (const name of names ?? []) {
        const { status, note } = trinityComponentStatus(registry as TrinityRegistry, name);
        rows.push(row(registry, name, release, status, note));
      }
    }
  }
  return rows.join("\n") + "\n";
}

/** docs/config.md: the tables under their headings. */
export function configDocsMarkdown(): string {
  return "# Config reference\n\nGenerated from src/config/schema.ts and " +
    "src/config/trinity_rules.ts / trinity_ignored.ts by deno task config-docs.\n\n" +
    configReferenceMarkdown() +
    "\n## Trinity-RFT keys\n\nEvery key of Trinity-RFT's config schema " +
    "(src/config/trinity_keys.ts); the keys of a stage (`stages[].x`) are the top-level keys " +
    "`x`. *implemented*: the same key above; *mapped*: read as rft's " +
    "keys or accepted only at Trinity's default (else an error saying why); *ignored*: no " +
    "meaning in one process, dropped and listed once in the `ignored Trinity keys:` line at " +
    "start. Any other key is an error with a did-you-mean.\n\n" + trinityKeysMarkdown() +
    "\n## Trinity-RFT components\n\nEvery name of Trinity-RFT's component registries " +
    "(src/config/trinity_names.ts: algorithm types, policy losses, advantage, KL and entropy " +
    "fns, sample strategies, experience operators, task selectors, workflows, reward fns) and " +
    "what rft does with it (src/config/trinity_registry.ts). *implemented*: rft's registry of " +
    "that kind has the name (the note says how it differs from Trinity's, when it does); " +
    "*refused*: a config naming it stops before any GPU work with one line naming the system " +
    "it needs; *missing*: not built, for the reason given.\n\n" + trinityComponentsMarkdown();
}

/** A table row with `|` escaped in its cells. */
function row(...cells: string[]): string {
  return `| ${cells.map((c) => c.replaceAll("|", "\\|")).join(" | ")} |`;
}

/** The type column: what the key takes; a list of an already listed section points there. */
function typeText(field: FieldSchema, listedAt: ReadonlyMap<FieldSchema, string>): string {
  if (field.type === "section") return field.optional ? "section (optional)" : "section";
  if (field.type === "list") {
    const at = listedAt.get(field.of);
    if (at !== undefined) return `list of sections like \`${at}\``;
    const size = field.length === undefined ? "" : ` (${field.length})`;
    return `list${size} of ${
      field.of.type === "section" ? "sections" : typeText(field.of, listedAt)
    }`;
  }
  if (field.type === "string" && field.path !== undefined) return "path";
  return expectedText(field).replace(/^an? /, "");
}

/** The default column: the value, the computed default in words, "required" or "-". */
function defaultText(field: FieldSchema): string {
  const words = field.derived ?? field.defaultDoc;
  if (words !== undefined) return words;
  if ("required" in field && field.required) return "required";
  if (field.type === "args" || field.type === "map") return "`{}`";
  if (field.type === "list") return `\`${JSON.stringify(field.default ?? [])}\``;
  if (field.type === "section") return "-";
  return field.default === undefined ? "-" : `\`${JSON.stringify(field.default)}\``;
}
