/**
 * Interpolation in the string scalars of a config tree, as OmegaConf (Trinity-RFT) writes it and
 * as rft wrote it: `${oc.env:NAME}` and `${oc.env:NAME,default}` read an environment variable;
 * `${a.b.c}` (absolute) and `${.sibling}` / `${..uncle}` (relative) copy another key's value;
 * rft's `${NAME}` / `${NAME:default}` read an environment variable too; `${oc.decode:...}`
 * reads the text inside (references resolved) as a YAML scalar. `$${` is a literal `${`.
 * A scalar that is one reference alone takes the referenced value as it is (a number, a mapping)
 * when unquoted, or when it references a key; otherwise references are joined as text. Runs after
 * `--set`, so an override replaces a reference before it is resolved. Keys are never interpolated.
 */

import { ConfigError } from "./config_error.ts";
import type { ConfigNode, ScalarValue } from "./config_tree.ts";
import { parse } from "yaml";

/** A reference (`${...}`, group 1 its inside) or the escape `$${`. */
const REFERENCE = /\$\$\{|\$\{([^}]*)\}/g;
/** A scalar that is exactly one reference. */
const WHOLE = /^\$\{([^}]*)\}$/;
/** OmegaConf's env resolver: `oc.env:NAME` or `oc.env:NAME,default`. */
const OC_ENV = /^\s*oc\.env\s*:\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:,(.*))?$/s;
/** OmegaConf's decode resolver around one value: `${oc.decode:...}` (references inside). */
const OC_DECODE = /^\$\{\s*oc\.decode\s*:(.*)\}$/s;
/** rft's env form: `NAME` or `NAME:default`. */
const RFT_ENV = /^([A-Za-z_][A-Za-z0-9_]*)(?::(.*))?$/s;
/** A key path: `a.b.c`, `a.b[0].c`, `.sibling`, `..uncle`. */
const KEY_PATH = /^\.*[A-Za-z_][A-Za-z0-9_-]*(?:\[\d+\]|\.[A-Za-z0-9_-]+)*$/;

/** One step from a node to a child. */
type Step = string | number;

/**
 * `root` with every reference in its string scalars resolved: environment variables through
 * `lookup`, key references against `root` itself (references in the referenced value are
 * resolved first). Throws a ConfigError naming `file:line` and the key for an unset variable
 * without a default, a reference to a key that is not there, a cycle, or a malformed reference.
 *
 * @example
 * ```ts
 * import { parseConfigTree } from "./config_tree.ts";
 * const parsed = parseConfigTree("lr: ${oc.env:LR,1e-5}\n", (line) => `a.yaml:${line}`);
 * const tree = interpolate(parsed, (name) => Deno.env.get(name));
 * ```
 */
export function interpolate(
  root: ConfigNode,
  lookup: (name: string) => string | undefined,
): ConfigNode {
  return new Interpolation(root, lookup).visit(root, []);
}

/** What `${...}` stands for: text, or a resolved key's node. */
type Target = { kind: "text"; text: string } | { kind: "key"; node: ConfigNode };

/** One pass of {@link interpolate} over `root`: each node resolved once, cycles detected. */
class Interpolation {
  readonly #resolving = new Set<ConfigNode>();
  readonly #done = new Map<ConfigNode, ConfigNode>();

  constructor(
    readonly root: ConfigNode,
    readonly lookup: (name: string) => string | undefined,
  ) {}

  /** `node` (at `at` from the root) with its references resolved. */
  visit(node: ConfigNode, at: Step[]): ConfigNode {
    const cached = this.#done.get(node);
    if (cached) return cached;
    let out: ConfigNode;
    if (node.kind === "map") {
      const entries = new Map(
        [...node.entries].map(([k, v]) => [k, this.visit(v, [...at, k])]),
      );
      out = { ...node, entries };
    } else if (node.kind === "list") {
      out = { ...node, items: node.items.map((n, i) => this.visit(n, [...at, i])) };
    } else {
      if (this.#resolving.has(node)) {
        fail(node, `expected references without a cycle, found one through ${node.origin.path}`);
      }
      this.#resolving.add(node);
      out = this.#scalar(node, at);
      this.#resolving.delete(node);
    }
    this.#done.set(node, out);
    return out;
  }

  /** A scalar: one reference alone takes the referenced value; others are joined as text. */
  #scalar(node: ConfigNode & { kind: "scalar" }, at: Step[]): ConfigNode {
    if (typeof node.value !== "string" || !node.value.includes("${")) return node;
    const decode = OC_DECODE.exec(node.value);
    if (decode) {
      // The text inside, its references resolved, read as a YAML scalar (a number, a boolean).
      const inner = this.#scalar({ ...node, value: unquote(decode[1]), plain: false }, at);
      return { ...node, value: asScalar(String((inner as { value: ScalarValue }).value)) };
    }
    const whole = WHOLE.exec(node.value);
    if (whole) {
      const target = this.#resolveInside(node, whole[1], at);
      if (target.kind === "key") return { ...target.node, origin: node.origin };
      const value = node.plain ? asScalar(target.text) : target.text;
      return { ...node, value };
    }
    const value = node.value.replace(REFERENCE, (match, inside: string | undefined) => {
      if (inside === undefined) return "${";
      const target = this.#resolveInside(node, inside, at);
      if (target.kind === "text") return target.text;
      if (target.node.kind !== "scalar") {
        fail(node, `expected ${match} to name a value to put in text, found a ${target.node.kind}`);
      }
      return String((target.node as { value: ScalarValue }).value);
    });
    return { ...node, value };
  }

  /** What `${inside}` in `node` (at `at`) stands for: an environment variable or a key. */
  #resolveInside(node: ConfigNode, inside: string, at: Step[]): Target {
    const env = OC_ENV.exec(inside) ?? this.#legacyEnv(inside);
    if (env) {
      const value = this.lookup(env[1]) ?? (env[2] === undefined ? undefined : unquote(env[2]));
      if (value === undefined) {
        fail(
          node,
          `expected environment variable ${env[1]} to be set, found it unset (write ` +
            `\${oc.env:${env[1]},default} to give a default)`,
        );
      }
      return { kind: "text", text: value as string };
    }
    const path = inside.trim();
    if (!KEY_PATH.test(path)) {
      fail(
        node,
        `expected \${oc.env:NAME}, \${oc.env:NAME,default} or \${key.path}, found ` +
          JSON.stringify(`\${${inside}}`),
      );
    }
    const steps = keySteps(path, at);
    let target: ConfigNode | undefined = this.root;
    for (const step of steps ?? []) {
      target = target === undefined ? undefined : child(target, step);
    }
    if (steps === undefined || target === undefined) {
      fail(node, `expected \${${path}} to name a key of this config, found no such key`);
    }
    return { kind: "key", node: this.visit(target as ConfigNode, steps as Step[]) };
  }

  /** `NAME` / `NAME:default` as an env reference, unless a bare NAME is a top-level key. */
  #legacyEnv(inside: string): RegExpExecArray | null {
    const match = RFT_ENV.exec(inside);
    if (!match) return null;
    const root = this.root;
    const isKey = match[2] === undefined && root.kind === "map" && root.entries.has(match[1]);
    return isKey ? null : match;
  }
}

/** The steps from the root to `path`, which is absolute or relative to the node at `at`. */
function keySteps(path: string, at: readonly Step[]): Step[] | undefined {
  const dots = /^\.*/.exec(path)![0].length;
  if (dots > at.length) return undefined;
  // `.x` is a sibling: it starts from the parent of the referencing node; each more dot goes up.
  const base = dots === 0 ? [] : at.slice(0, at.length - dots);
  const steps: Step[] = [...base];
  for (const part of path.slice(dots).split(".")) {
    const [name, ...indices] = part.split("[");
    steps.push(/^\d+$/.test(name) ? Number(name) : name);
    for (const index of indices) steps.push(Number(index.slice(0, -1)));
  }
  return steps;
}

/** The child of `node` at `step`, if any. */
function child(node: ConfigNode, step: Step): ConfigNode | undefined {
  if (node.kind === "map" && typeof step === "string") return node.entries.get(step);
  if (node.kind === "list" && typeof step === "number") return node.items[step];
  return undefined;
}

/** A default as OmegaConf reads it: trimmed, one pair of quotes removed. */
function unquote(text: string): string {
  const trimmed = text.trim();
  const quoted = /^(['"])(.*)\1$/s.exec(trimmed);
  return quoted ? quoted[2] : trimmed;
}

/** Throws a ConfigError at `node`. */
function fail(node: ConfigNode, detail: string): never {
  throw new ConfigError(node.origin.where, node.origin.path, detail);
}

/** `text` read as a YAML scalar when it is a number, boolean or null; else `text` itself. */
function asScalar(text: string): ScalarValue {
  if (text === "") return text;
  try {
    const value = parse(text);
    return value === null || typeof value === "number" || typeof value === "boolean" ? value : text;
  } catch {
    return text;
  }
}
