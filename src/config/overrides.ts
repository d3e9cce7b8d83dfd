/**
 * `--set key.path=value` overrides on a config tree: the key path is in YAML snake_case with
 * `[i]` for list items (`stages[1].algorithm.optimizer.lr`), checked against the schema (or
 * Trinity-RFT's key table, for its keys rft maps or ignores); the
 * value is read as YAML (`3`, `true`, `[0.9, 0.95]`, text). An override replaces what is at its
 * path, creating mappings on the way. Values are not validated here (the loader does that).
 */

import { knownNames } from "../util/registry.ts";
import { ConfigError } from "./config_error.ts";
import {
  childPath,
  type ConfigNode,
  describeNode,
  itemPath,
  parseConfigTree,
} from "./config_tree.ts";
import type { FieldSchema } from "./schema.ts";
import { TRINITY_KEYS } from "./trinity_keys.ts";

/** One step of a key path: a mapping key or a list index. */
type Step = { key: string } | { index: number };

/**
 * Applies each override (`"a.b.c=value"`, as given after `--set`) to `root` in order; `root`
 * is changed in place and returned. Throws a ConfigError naming the override on a malformed
 * one, an unknown key, an index past a list's end, or a value that is not valid YAML.
 *
 * @example
 * ```ts
 * import { parseConfigTree } from "./config_tree.ts";
 * import { CONFIG_SCHEMA } from "./schema.ts";
 * const tree = parseConfigTree("buffer:\n  batch_size: 8\n", (line) => `run.yaml:${line}`);
 * applyOverrides(tree, ["buffer.batch_size=16"], CONFIG_SCHEMA);
 * ```
 */
export function applyOverrides(
  root: ConfigNode,
  overrides: readonly string[],
  schema: FieldSchema,
): ConfigNode {
  let tree = root;
  for (const override of overrides) tree = applyOverride(tree, override, schema);
  return tree;
}

/** `root` with one override applied. */
function applyOverride(root: ConfigNode, override: string, schema: FieldSchema): ConfigNode {
  const where = `--set ${override}`;
  const eq = override.indexOf("=");
  const steps = eq > 0 ? parseSteps(override.slice(0, eq)) : undefined;
  if (steps === undefined) {
    throw new ConfigError(
      where,
      undefined,
      'expected key.path=value, found no valid key path before "="',
    );
  }
  const path = checkKeyPath(steps, schema, where).path;
  const value = parseConfigTree(override.slice(eq + 1), () => where, path);
  return setAt(root, steps, value, where);
}

/**
 * Whether `override` sets a Trinity key rft's schema lacks (one its Trinity rules map): such an
 * override is translated after the config's own keys, so that it wins over what they say. False
 * for a malformed override (applying it reports why).
 */
export function isTrinityOverride(override: string, schema: FieldSchema): boolean {
  const eq = override.indexOf("=");
  const steps = eq > 0 ? parseSteps(override.slice(0, eq)) : undefined;
  if (steps === undefined) return false;
  try {
    return checkKeyPath(steps, schema, override).trinityKey;
  } catch {
    return false;
  }
}

/**
 * The key path of `steps` checked against `schema` (or Trinity-RFT's key table, for its keys
 * rft maps or ignores: nothing below such a key is checked here), and whether it left rft's
 * schema for a Trinity key; a ConfigError at `where` otherwise.
 */
function checkKeyPath(
  steps: readonly Step[],
  schema: FieldSchema,
  where: string,
): { path: string; trinityKey: boolean } {
  let path = "";
  let field: FieldSchema | undefined = schema;
  // The Trinity key path so far (`[]` for items, stages read as the top level).
  let trinityPath = "";
  let trinityKey = false;
  for (const step of steps) {
    const next = "key" in step ? childPath(path, step.key) : itemPath(path, step.index);
    const fail = (detail: string): never => {
      throw new ConfigError(where, next, detail);
    };
    if ("key" in step) trinityPath = childPath(trinityPath, step.key);
    else trinityPath = trinityPath === "stages" ? "" : `${trinityPath}[]`;
    if (trinityKey) {
      path = next;
      continue;
    }
    if ("key" in step) {
      if (field?.type === "section") {
        if (!Object.hasOwn(field.fields, step.key) && TRINITY_KEYS.has(trinityPath)) {
          trinityKey = true;
        } else if (!Object.hasOwn(field.fields, step.key)) {
          fail(
            `unknown key ${JSON.stringify(step.key)}; ${
              knownNames(step.key, Object.keys(field.fields))
            }`,
          );
        }
        field = trinityKey ? undefined : field.fields[step.key];
      } else if (field?.type === "args" || field?.type === "map") {
        field = undefined;
      } else {
        fail(`expected no key here, found ${JSON.stringify(step.key)} under a value`);
      }
    } else {
      if (field?.type !== "list") {
        fail(`expected no index here, found [${step.index}] under a non-list`);
      }
      field = (field as { of: FieldSchema }).of;
    }
    path = next;
  }
  return { path, trinityKey };
}

/** The steps of `a.b[2].c`, or undefined when it is not a key path. */
function parseSteps(keyPath: string): Step[] | undefined {
  const steps: Step[] = [];
  for (const part of keyPath.split(".")) {
    const match = /^([A-Za-z0-9_]+)((?:\[\d+\])*)$/.exec(part);
    if (!match) return undefined;
    steps.push({ key: match[1] });
    for (const index of match[2].matchAll(/\[(\d+)\]/g)) steps.push({ index: Number(index[1]) });
  }
  return steps;
}

/** `node` with `value` put at `steps` (mappings created where the tree has none). */
function setAt(
  node: ConfigNode,
  steps: readonly Step[],
  value: ConfigNode,
  where: string,
): ConfigNode {
  if (steps.length === 0) return value;
  const [step, ...rest] = steps;
  const fail = (found: ConfigNode): never => {
    throw new ConfigError(
      where,
      found.origin.path,
      `expected a mapping to set a key in, found ${describeNode(found)}`,
    );
  };
  if ("key" in step) {
    const map = node.kind === "map"
      ? node
      : node.kind === "scalar" && node.value === null
      ? { kind: "map" as const, entries: new Map<string, ConfigNode>(), origin: node.origin }
      : fail(node);
    const path = childPath(map.origin.path, step.key);
    const child = map.entries.get(step.key) ??
      { kind: "scalar" as const, value: null, plain: true, origin: { where, path } };
    map.entries.set(step.key, setAt(child, rest, value, where));
    return map;
  }
  if (node.kind !== "list" || step.index >= node.items.length) {
    const length = node.kind === "list" ? node.items.length : 0;
    throw new ConfigError(
      where,
      itemPath(node.origin.path, step.index),
      `expected an index below ${length}, found ${step.index}`,
    );
  }
  node.items[step.index] = setAt(node.items[step.index], rest, value, where);
  return node;
}
