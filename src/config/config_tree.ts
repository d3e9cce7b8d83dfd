/**
 * A YAML document as a tree of values that remember where they came from (`file:line` or a
 * `--set` override) and their key path, so every later check can name both. Builds the tree
 * from YAML text and deep-merges trees (stages over the top level); does not know the schema.
 */

import {
  type Document,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  type Node as YamlNode,
  parseDocument,
} from "yaml";
import { ConfigError } from "./config_error.ts";

/** A YAML scalar as parsed (YAML 1.2 core schema). */
export type ScalarValue = string | number | boolean | null;

/** Where a value was written: `where` is `file:line` or `--set key=value`; `path` its key path. */
export interface Origin {
  where: string;
  path: string;
}

/** A node of the config tree. `plain` marks an unquoted scalar (see `interpolate.ts`). */
export type ConfigNode =
  | { kind: "scalar"; value: ScalarValue; plain: boolean; origin: Origin }
  | { kind: "map"; entries: Map<string, ConfigNode>; origin: Origin }
  | { kind: "list"; items: ConfigNode[]; origin: Origin };

/** Key path of `key` under `parent` (`a.b`; the root's children have no prefix). */
export function childPath(parent: string, key: string): string {
  return parent ? `${parent}.${key}` : key;
}

/** Key path of item `index` of the list at `parent` (`a.b[2]`). */
export function itemPath(parent: string, index: number): string {
  return `${parent}[${index}]`;
}

/**
 * Parses `text` into a tree rooted at key path `path`. `whereAt(line)` names the place of a
 * node on `line` (1-based). Throws a ConfigError on invalid YAML (first error, with its line),
 * on a key that is not a scalar, and on more than one document.
 *
 * @example
 * ```ts
 * const tree = parseConfigTree("lr: 1e-5\n", (line) => `run.yaml:${line}`);
 * ```
 */
export function parseConfigTree(
  text: string,
  whereAt: (line: number) => string,
  path = "",
): ConfigNode {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const lineOf = (offset: number) => lineCounter.linePos(offset).line;
  const error = doc.errors[0];
  if (error) {
    throw new ConfigError(
      whereAt(lineOf(error.pos[0])),
      undefined,
      `expected valid YAML, found an error: ${error.message.split("\n")[0]}`,
    );
  }
  const root = doc.contents as YamlNode | null;
  if (root === null) {
    return { kind: "scalar", value: null, plain: true, origin: { where: whereAt(1), path } };
  }
  return build(doc, root, { where: whereAt(lineOf(root.range?.[0] ?? 0)), path }, whereAt, lineOf);
}

/** Converts the YAML node `node`, written at `origin`. */
function build(
  doc: Document,
  node: YamlNode,
  origin: Origin,
  whereAt: (line: number) => string,
  lineOf: (offset: number) => number,
): ConfigNode {
  if (isAlias(node)) return build(doc, node.resolve(doc) as YamlNode, origin, whereAt, lineOf);
  const at = (n: { range?: [number, number, number] | null }, path: string): Origin => ({
    where: n.range ? whereAt(lineOf(n.range[0])) : origin.where,
    path,
  });
  if (isMap(node)) {
    const entries = new Map<string, ConfigNode>();
    for (const pair of node.items) {
      const key = pair.key as YamlNode | null;
      if (!isScalar(key)) {
        throw new ConfigError(
          origin.where,
          origin.path || "config",
          "expected scalar keys, found a complex key",
        );
      }
      const name = String(key.value);
      const keyOrigin = at(key, childPath(origin.path, name));
      const value = pair.value as YamlNode | null;
      entries.set(
        name,
        value === null
          ? { kind: "scalar", value: null, plain: true, origin: keyOrigin }
          : build(doc, value, keyOrigin, whereAt, lineOf),
      );
    }
    return { kind: "map", entries, origin };
  }
  if (isSeq(node)) {
    const items = node.items.map((item, i) => {
      const itemOrigin = at(item as YamlNode, itemPath(origin.path, i));
      return item === null
        ? { kind: "scalar" as const, value: null, plain: true, origin: itemOrigin }
        : build(doc, item as YamlNode, itemOrigin, whereAt, lineOf);
    });
    return { kind: "list", items, origin };
  }
  if (isScalar(node)) {
    const value = node.value;
    if (value === null || ["string", "number", "boolean"].includes(typeof value)) {
      return { kind: "scalar", value: value as ScalarValue, plain: node.type === "PLAIN", origin };
    }
  }
  throw new ConfigError(
    origin.where,
    origin.path || "config",
    "expected a YAML scalar, mapping or list",
  );
}

/**
 * `over` deep-merged onto `base`: mappings merge key by key, anything else (lists, scalars)
 * in `over` replaces what `base` has. Neither tree is changed; nodes keep their origins.
 */
export function mergeTrees(base: ConfigNode, over: ConfigNode): ConfigNode {
  if (base.kind !== "map" || over.kind !== "map") return over;
  const entries = new Map(base.entries);
  for (const [key, node] of over.entries) {
    const under = entries.get(key);
    entries.set(key, under === undefined ? node : mergeTrees(under, node));
  }
  return { kind: "map", entries, origin: over.origin };
}

/** How a node reads in a message: `"text"`, `3`, `true`, `null`, `a mapping`, `a list`. */
export function describeNode(node: ConfigNode): string {
  if (node.kind === "map") return "a mapping";
  if (node.kind === "list") return "a list";
  return typeof node.value === "string" ? JSON.stringify(node.value) : String(node.value);
}

/** The plain JS value of a node (mappings become objects). */
export function toPlain(node: ConfigNode): unknown {
  if (node.kind === "scalar") return node.value;
  if (node.kind === "list") return node.items.map(toPlain);
  return Object.fromEntries([...node.entries].map(([key, value]) => [key, toPlain(value)]));
}
