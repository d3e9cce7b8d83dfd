/**
 * Trinity-RFT's configs on rft's schema: walks a config tree beside rft's schema and Trinity's
 * key table before validation. A key rft's schema has is kept; a Trinity key rft lacks is mapped
 * (its rule in `trinity_rules.ts` runs) or ignored (`trinity_ignored.ts`: dropped, listed once);
 * below an ignored section each key must still be Trinity's. Anything else is left for the
 * validator to reject with a did-you-mean.
 */

import { resolve } from "node:path";
import { knownNames } from "../util/registry.ts";
import { ConfigError } from "./config_error.ts";
import type { ConfigNode } from "./config_tree.ts";
import type { FieldSchema, SectionField } from "./schema.ts";
import { TRINITY_KEYS } from "./trinity_keys.ts";
import { IGNORED } from "./trinity_ignored.ts";
import { type MapNode, MAPPED } from "./trinity_rules.ts";

/** What the translation dropped and why, for the warning lines at start. */
export interface TrinityTranslation {
  /** Trinity key paths dropped, each once, in the order met. */
  ignored: string[];
  /** Other warnings (an sqlite path replaced, ...). */
  notes: string[];
}

/**
 * Rewrites `root` (a config's top-level mapping, changed in place) so that only rft's keys and
 * unknown keys remain; `schema` is rft's top-level section. Each item of `stages` is read as a
 * top level of its own. A mapped key sets rft's keys the config does not write, or, with
 * `overriding` (the Trinity keys of `--set` overrides), whatever it writes; relative paths a
 * rule looks up are read from the working directory, then `configDir`. Throws a ConfigError
 * when a mapped key's value cannot be honoured or a key under an ignored section is not
 * Trinity's.
 */
export function translateTrinityKeys(
  root: MapNode,
  schema: SectionField,
  { overriding = false, configDir = "." }: { overriding?: boolean; configDir?: string } = {},
): TrinityTranslation {
  const result: TrinityTranslation = { ignored: [], notes: [] };
  const ignore = (path: string) => {
    if (!result.ignored.includes(path)) result.ignored.push(path);
  };
  const walk = (map: MapNode, fields: SectionField["fields"], prefix: string, top: MapNode) => {
    for (const [key, node] of [...map.entries]) {
      const path = prefix ? `${prefix}.${key}` : key;
      const field = fields[key];
      const rule = MAPPED[path];
      if (rule) {
        map.entries.delete(key);
        rule.apply({
          key,
          path,
          node,
          parent: map,
          root: top,
          setIfAbsent: (steps, value) => setIfAbsent(top, steps, value, overriding),
          put: (target, name, value) => {
            if (overriding || !target.entries.has(name)) target.entries.set(name, value);
          },
          note: (line) => result.notes.push(line),
          ignore,
          exists: (path) =>
            [resolve(path), resolve(configDir, path)].some((p) => {
              try {
                Deno.statSync(p);
                return true;
              } catch {
                return false;
              }
            }),
        });
      } else if (field !== undefined) {
        walkField(field, node, path, top);
      } else if (IGNORED[path] !== undefined) {
        checkTrinityKeys(node, path);
        map.entries.delete(key);
        ignore(path);
      }
    }
  };
  const walkField = (field: FieldSchema, node: ConfigNode, path: string, top: MapNode) => {
    if (field.type === "section" && node.kind === "map") walk(node, field.fields, path, top);
    if (field.type === "list" && field.of.type === "section" && node.kind === "list") {
      const of = field.of;
      for (const item of node.items) {
        if (item.kind !== "map") continue;
        if (path === "stages") walk(item, of.fields, "", item);
        else walk(item, of.fields, `${path}[]`, top);
      }
    }
  };
  walk(root, schema.fields, "", root);
  return result;
}

/** Throws at the first key under `node` (at Trinity path `path`) that Trinity does not have. */
function checkTrinityKeys(node: ConfigNode, path: string): void {
  const kind = TRINITY_KEYS.get(path);
  if (kind !== "section") return;
  const items = node.kind === "list" ? node.items : [node];
  const prefix = node.kind === "list" ? `${path}[]` : path;
  for (const item of items) {
    if (item.kind !== "map") continue;
    for (const [key, child] of item.entries) {
      const childPath = `${prefix}.${key}`;
      if (!TRINITY_KEYS.has(childPath)) {
        const names = [...TRINITY_KEYS.keys()]
          .filter((k) => k.startsWith(`${prefix}.`) && !k.slice(prefix.length + 1).includes("."))
          .map((k) => k.slice(prefix.length + 1));
        throw new ConfigError(
          child.origin.where,
          child.origin.path,
          `unknown key ${JSON.stringify(key)}; ${knownNames(key, names)}`,
        );
      }
      checkTrinityKeys(child, childPath);
    }
  }
}

/** Sets `steps` under `root` to `value` unless written (or `overwrite`), making mappings on the way. */
function setIfAbsent(
  root: MapNode,
  steps: readonly string[],
  value: ConfigNode,
  overwrite: boolean,
): void {
  let map = root;
  for (const step of steps.slice(0, -1)) {
    let next = map.entries.get(step);
    if (next === undefined || (next.kind === "scalar" && next.value === null)) {
      next = { kind: "map", entries: new Map(), origin: value.origin };
      map.entries.set(step, next);
    }
    if (next.kind !== "map") return;
    map = next;
  }
  const last = steps.at(-1)!;
  if (overwrite || !map.entries.has(last)) map.entries.set(last, value);
}
