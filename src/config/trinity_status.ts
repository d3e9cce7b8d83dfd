/**
 * The status in rft of each key of Trinity-RFT's schema: `implemented` (rft's schema has it,
 * same meaning), `mapped` (a rule reads it as rft keys or checks it), `ignored` (dropped with a
 * warning: no meaning in one process), or `missing` (none of these: an error). Feeds the
 * reference in docs/config.md and the test that no Trinity key is missing. Reads tables only.
 */

import { CONFIG_SCHEMA, type FieldSchema } from "./schema.ts";
import { TRINITY_KEYS } from "./trinity_keys.ts";
import { IGNORED } from "./trinity_ignored.ts";
import { MAPPED } from "./trinity_rules.ts";

/** A Trinity key's status and the one-line note that explains it. */
export interface TrinityKeyStatus {
  status: "implemented" | "mapped" | "ignored" | "missing";
  note: string;
}

/**
 * The status of Trinity key `path` (as in `TRINITY_KEYS`). Keys under `stages[]` are the
 * top-level keys of the same name; a key below a mapped or ignored section shares its status.
 */
export function trinityKeyStatus(path: string): TrinityKeyStatus {
  const own = path.startsWith("stages[].") ? path.slice("stages[].".length) : path;
  const field = rftField(path) ?? rftField(own);
  if (field !== undefined) return { status: "implemented", note: field.doc };
  for (let at = own; at !== ""; at = parentPath(at)) {
    const rule = MAPPED[at];
    if (rule) return { status: "mapped", note: rule.doc };
    const why = IGNORED[at];
    if (why !== undefined) return { status: "ignored", note: why };
    // Below a key rft takes as a free mapping, everything is that mapping's.
    const parent = rftField(parentPath(at));
    if (parent?.type === "args" || parent?.type === "map") {
      return { status: "implemented", note: parent.doc };
    }
  }
  return { status: "missing", note: "" };
}

/** Every Trinity key path with its status, in the table's order. */
export function trinityKeyStatuses(): [string, TrinityKeyStatus][] {
  return [...TRINITY_KEYS.keys()].map((path) => [path, trinityKeyStatus(path)]);
}

/** `a.b[].c` -> `a.b[]`, `a.b[]` -> `a.b`, `a` -> "". */
function parentPath(path: string): string {
  if (path.endsWith("[]")) return path.slice(0, -2);
  const dot = path.lastIndexOf(".");
  return dot < 0 ? "" : path.slice(0, dot);
}

/** rft's schema entry at Trinity path `path`, if rft has one. */
function rftField(path: string): FieldSchema | undefined {
  let field: FieldSchema | undefined = CONFIG_SCHEMA;
  for (const part of path.split(".")) {
    const [key, ...lists] = part.split("[]");
    if (field?.type !== "section") return undefined;
    field = field.fields[key];
    if (lists.length > 0) field = field?.type === "list" ? field.of : undefined;
  }
  return field;
}
