/**
 * Checks a config tree against the schema and turns it into plain camelCase values: types,
 * ranges, enum names, unknown keys (with a did-you-mean), required keys, schema defaults, and
 * paths (resolved against the config's directory, checked to exist; a model or dataset path
 * that is a Hub id not on disk there is looked up in the local Hub cache). Defaults computed from
 * other keys and checks across keys are `load_config.ts`'s.
 */

import { isAbsolute, resolve } from "node:path";
import { hubCacheSnapshot } from "../buffer/dataset_files.ts";
import { isSqliteUrl, sqliteFile } from "../buffer/sqlite_rows.ts";
import { knownNames } from "../util/registry.ts";
import { ConfigError } from "./config_error.ts";
import {
  childPath,
  type ConfigNode,
  describeNode,
  itemPath,
  type Origin,
  toPlain,
} from "./config_tree.ts";
import {
  camelCase,
  type Fields,
  type FieldSchema,
  type ListField,
  type Range,
  type ScalarField,
  type SectionOf,
} from "./schema_fields.ts";

/** What a field expects, in words (`an integer >= 1`, `one of a, b`, `a mapping`). */
export function expectedText(field: FieldSchema): string {
  switch (field.type) {
    case "string":
      return field.path === "model"
        ? "a model directory with a config.json"
        : field.path === "exists"
        ? "an existing file or directory"
        : field.path === "dataset"
        ? "a dataset file or directory (or a Hub id in the local Hub cache)"
        : "a string";
    case "int":
      return `an integer${rangeText(field)}`;
    case "number":
      return `a number${rangeText(field)}`;
    case "bool":
      return "true or false";
    case "enum":
      return `one of ${field.values().join(", ")}`;
    case "args":
      return "a mapping of scalars";
    case "map":
      return "a mapping";
    case "list":
      return field.length !== undefined
        ? `a list of ${field.length}`
        : field.maxLength !== undefined
        ? `a list of at most ${field.maxLength}`
        : "a list";
    case "section":
      return "a mapping";
  }
}

/** ` >= 1`, ` > 0`, ` in [0, 1]`, ` in (0, 1]`, or nothing. */
function rangeText({ min, max, above }: Range): string {
  const low = above !== undefined ? `(${above}` : min !== undefined ? `[${min}` : undefined;
  if (low !== undefined && max !== undefined) return ` in ${low}, ${max}]`;
  if (above !== undefined) return ` > ${above}`;
  if (min !== undefined) return ` >= ${min}`;
  if (max !== undefined) return ` <= ${max}`;
  return "";
}

/**
 * The section `fields` read from `node` (undefined or null: not written) as a camelCase
 * object of the schema's type (derived keys not filled yet). `at` is where the section is (for
 * keys that are missing); relative paths resolve against `configDir`. Throws a ConfigError at
 * the first problem.
 */
export function resolveSection<S extends Fields>(
  fields: S,
  node: ConfigNode | undefined,
  at: Origin,
  configDir: string,
): SectionOf<S, "input"> {
  return readSection(fields, node, at, configDir) as SectionOf<S, "input">;
}

/** {@link resolveSection} as a plain object: the walk itself, on any schema. */
function readSection(
  fields: Fields,
  node: ConfigNode | undefined,
  at: Origin,
  configDir: string,
): Record<string, unknown> {
  const entries = node?.kind === "map" ? node.entries : new Map<string, ConfigNode>();
  if (node && node.kind !== "map" && !isNull(node)) {
    throw new ConfigError(
      node.origin.where,
      at.path,
      `expected a mapping, found ${describeNode(node)}`,
    );
  }
  checkKnownKeys(entries, Object.keys(fields));
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(fields)) {
    const child = entries.get(key);
    const value = resolveField(
      field,
      child,
      child?.origin ?? { where: at.where, path: childPath(at.path, key) },
      configDir,
    );
    if (value !== undefined) out[camelCase(key)] = value;
  }
  return out;
}

/** Throws at the first key of `entries` not in `names`, with a did-you-mean. */
export function checkKnownKeys(
  entries: ReadonlyMap<string, ConfigNode>,
  names: readonly string[],
): void {
  for (const [key, child] of entries) {
    if (!names.includes(key)) {
      throw new ConfigError(
        child.origin.where,
        child.origin.path,
        `unknown key ${JSON.stringify(key)}; ${knownNames(key, names)}`,
      );
    }
  }
}

/** Whether `node` is a YAML null (`key:` or `key: null`), which counts as not written. */
function isNull(node: ConfigNode): boolean {
  return node.kind === "scalar" && node.value === null;
}

/** The value of `field` from `node` (undefined: not written); `at` names it in messages. */
function resolveField(
  field: FieldSchema,
  node: ConfigNode | undefined,
  at: Origin,
  configDir: string,
): unknown {
  const fail = (found: string): never => {
    throw new ConfigError(at.where, at.path, `expected ${expectedText(field)}, found ${found}`);
  };
  const given = node !== undefined && !isNull(node) ? node : undefined;
  switch (field.type) {
    case "section":
      return given === undefined && field.optional
        ? undefined
        : readSection(field.fields, given, at, configDir);
    case "list":
      return resolveList(field, given, at, configDir, fail);
    case "args":
    case "map": {
      if (given === undefined) return {};
      if (given.kind !== "map") return fail(describeNode(given));
      // A component's args may nest mappings and lists; its registry checks them against its
      // defaults (`configure`).
      return toPlain(given);
    }
    case "enum": {
      if (given === undefined) return field.default;
      const value = given.kind === "scalar" ? given.value : undefined;
      const values = field.values();
      if (typeof value === "string" && values.includes(value)) return value;
      if (typeof value === "string" && field.aliases?.[value] !== undefined) {
        return field.aliases[value];
      }
      const found = describeNode(given);
      throw new ConfigError(
        at.where,
        at.path,
        `expected a known value, found ${found}; ${knownNames(String(value ?? found), values)}`,
      );
    }
    default: {
      if (given === undefined) {
        if (field.required) return fail(node === undefined ? "nothing" : "null");
        return field.default;
      }
      const value = given.kind === "scalar" ? given.value : undefined;
      if (!hasType(field, value)) return fail(describeNode(given));
      if (!inRange(field, value as number | string | boolean)) return fail(describeNode(given));
      return field.path === undefined ? value : checkedPath(field, value as string, at, configDir);
    }
  }
}

/** The items of a list field, each resolved as `field.of`. */
function resolveList(
  field: ListField,
  given: ConfigNode | undefined,
  at: Origin,
  configDir: string,
  fail: (found: string) => never,
): unknown[] {
  if (given === undefined) return structuredClone([...(field.default ?? [])]);
  if (given.kind === "scalar" && field.scalarItem) {
    return [resolveField(field.of, given, at, configDir)];
  }
  if (given.kind !== "list") return fail(describeNode(given));
  if (field.length !== undefined && given.items.length !== field.length) {
    fail(`a list of ${given.items.length}`);
  }
  if (field.maxLength !== undefined && given.items.length > field.maxLength) {
    fail(`a list of ${given.items.length}`);
  }
  return given.items.map((item, i) => {
    const value = resolveField(field.of, item, {
      where: item.origin.where,
      path: itemPath(at.path, i),
    }, configDir);
    if (value === undefined) {
      throw new ConfigError(
        item.origin.where,
        itemPath(at.path, i),
        `expected ${expectedText(field.of)}, found null`,
      );
    }
    return value;
  });
}

/** Whether a scalar field can take `value`. */
function hasType(field: ScalarField, value: unknown): boolean {
  switch (field.type) {
    case "string":
      return typeof value === "string";
    case "bool":
      return typeof value === "boolean";
    case "int":
      return Number.isSafeInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
  }
}

/** Whether a number is within the field's range (non-numbers always are). */
function inRange({ min, max, above }: Range, value: number | string | boolean): boolean {
  if (typeof value !== "number") return true;
  return (min === undefined || value >= min) && (max === undefined || value <= max) &&
    (above === undefined || value > above);
}

/** `path` resolved against `configDir` and, as the field asks, checked to exist. */
function checkedPath(field: ScalarField, path: string, at: Origin, configDir: string): string {
  if (field.path === "dataset" && isSqliteUrl(path)) {
    const file = sqliteFile(path, configDir);
    if (statKind(file) !== "file") {
      throw new ConfigError(
        at.where,
        at.path,
        `expected an sqlite:/// URL of an existing file, found ${
          JSON.stringify(path)
        } (no file ${file})`,
      );
    }
    return `sqlite:///${file}`;
  }
  if (field.path === "resolve") {
    // An output folder: the working directory's when it is there (Trinity's reading), else the
    // config folder's.
    if (isAbsolute(path)) return path;
    return statKind(resolve(path)) === "directory" ? resolve(path) : resolve(configDir, path);
  }
  // Trinity's reading of a relative path: the working directory first, then the config's folder.
  const places = isAbsolute(path)
    ? [path]
    : [...new Set([resolve(path), resolve(configDir, path)])];
  const local = places.find((p) => statKind(p) !== undefined);
  const hubKind = field.path === "model" ? "models" : field.path === "dataset" ? "datasets" : "";
  const cached = hubKind && local === undefined ? hubCacheSnapshot(path, hubKind) : undefined;
  const absolute = local ?? cached ?? places[0];
  const fail = (why: string): never => {
    throw new ConfigError(
      at.where,
      at.path,
      `expected ${expectedText(field)}, found ${JSON.stringify(absolute)} (${why})`,
    );
  };
  const kind = statKind(absolute);
  if (kind === undefined) {
    const looked = [
      ...places.map((p) => JSON.stringify(p)),
      ...(hubKind && !isAbsolute(path) ? ["a Hub cache copy"] : []),
    ];
    const found = looked.length > 1 ? `neither ${looked.join(" nor ")}` : looked[0];
    throw new ConfigError(
      at.where,
      at.path,
      `expected ${expectedText(field)}, found ${found} (no such file or directory)`,
    );
  }
  if (field.path === "model") {
    if (kind !== "directory") fail("not a directory");
    if (statKind(resolve(absolute, "config.json")) !== "file") fail("no config.json in it");
  }
  return absolute;
}

/** "file", "directory", or undefined when nothing is at `path`. */
function statKind(path: string): "file" | "directory" | undefined {
  try {
    const info = Deno.statSync(path);
    return info.isDirectory ? "directory" : "file";
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
}
