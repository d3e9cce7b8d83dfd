/**
 * `${NAME}` and `${NAME:default}` in the string scalars of a config tree, replaced by
 * environment variables; `$${` stands for a literal `${`. An unquoted scalar that is one
 * reference alone (`lr: ${LR:1e-5}`) is re-read as a YAML scalar, so it can become a number,
 * a boolean or null; a quoted one stays a string. Keys are never interpolated.
 */

import { ConfigError } from "./config_error.ts";
import type { ConfigNode, ScalarValue } from "./config_tree.ts";
import { parse } from "yaml";

/** A reference (`${...}`, group 1 its inside) or the escape `$${`. */
const REFERENCE = /\$\$\{|\$\{([^}]*)\}/g;
/** The inside of a reference: a variable name, then optionally `:` and a default. */
const INSIDE = /^([A-Za-z_][A-Za-z0-9_]*)(?::(.*))?$/s;
/** A scalar that is exactly one reference. */
const WHOLE = /^\$\{[^}]*\}$/;

/**
 * `node` with every reference in its string scalars replaced by `lookup(name)` (or the
 * default). Throws a ConfigError naming the key when a variable is unset and has no default,
 * or when a reference is malformed.
 *
 * @example
 * ```ts
 * const tree = interpolateEnv(parseConfigTree("lr: ${LR:1e-5}\n", (l) => `a.yaml:${l}`),
 *   (name) => Deno.env.get(name));
 * ```
 */
export function interpolateEnv(
  node: ConfigNode,
  lookup: (name: string) => string | undefined,
): ConfigNode {
  if (node.kind === "map") {
    const entries = new Map([...node.entries].map(([k, v]) => [k, interpolateEnv(v, lookup)]));
    return { ...node, entries };
  }
  if (node.kind === "list") {
    return {
      ...node,
      items: node.items.map((n) => interpolateEnv(n, lookup)),
    };
  }
  if (typeof node.value !== "string" || !node.value.includes("${")) return node;
  const text = node.value.replace(REFERENCE, (match, inside: string | undefined) => {
    if (inside === undefined) return "${";
    const parts = INSIDE.exec(inside);
    if (!parts) {
      throw new ConfigError(
        node.origin.where,
        node.origin.path,
        `expected \${NAME} or \${NAME:default}, found ${JSON.stringify(match)}`,
      );
    }
    const value = lookup(parts[1]) ?? parts[2];
    if (value === undefined) {
      throw new ConfigError(
        node.origin.where,
        node.origin.path,
        `expected environment variable ${parts[1]} to be set, found it unset (write \${${
          parts[1]
        }:default} to give a default)`,
      );
    }
    return value;
  });
  const value = node.plain && WHOLE.test(node.value) ? asScalar(text) : text;
  return { ...node, value };
}

/** `text` read as a YAML scalar when it is a number, boolean or null; else `text` itself. */
function asScalar(text: string): ScalarValue {
  try {
    const value = parse(text);
    return value === null || typeof value === "number" || typeof value === "boolean" ? value : text;
  } catch {
    return text;
  }
}
