/**
 * Checks a parsed JSON value against a JSON schema (the assertions of draft 2020-12 that
 * structured outputs use: type, enum, const, properties, required, additionalProperties,
 * items / prefixItems, min/maxItems, uniqueItems, min/maxProperties, min/maxLength, pattern,
 * minimum / maximum / exclusive bounds / multipleOf, anyOf / oneOf / allOf / not, $ref, nullable).
 * `format` and other annotations are not asserted. Returns the problems, each naming the JSON
 * pointer of the offending value; an empty list means the value is valid.
 */

import { type JsonSchema, resolveRef } from "./json_schema_grammar.ts";

/** Problems reported at most (the first ones). */
const MAX_PROBLEMS = 5;

/** Why `value` does not satisfy `schema` (none: it does). */
export function jsonSchemaProblems(value: unknown, schema: JsonSchema): string[] {
  const problems: string[] = [];
  new Checker(schema, problems).check(value, schema, "");
  return problems.slice(0, MAX_PROBLEMS);
}

/** JSON's type name of `value` (`integer` for whole numbers). */
function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0);
    return Object.fromEntries(entries.map(([k, v]) => [k, canonical(v)]));
  }
  return value;
}

/** Checks values against one root schema (which `$ref`s resolve in), collecting problems. */
class Checker {
  constructor(readonly root: JsonSchema, readonly out: string[]) {}

  check(value: unknown, schema: JsonSchema, at: string): void {
    if (schema === true) return;
    if (schema === false) return void this.out.push(`${at || "/"}: no value is allowed here`);
    const s = schema as Record<string, unknown>;
    const fail = (what: string) => this.out.push(`${at || "/"}: ${what}`);
    if (typeof s.$ref === "string") {
      const target = resolveRef(this.root, s.$ref);
      if (target === undefined) return void fail(`"$ref" ${s.$ref} does not resolve`);
      this.check(value, target, at);
    }
    checkType(value, s, fail);
    if ("const" in s && !sameJson(value, s.const)) fail(`expected ${JSON.stringify(s.const)}`);
    if (Array.isArray(s.enum) && !s.enum.some((e) => sameJson(value, e))) {
      fail(`expected one of ${JSON.stringify(s.enum)}`);
    }
    this.#combinators(value, s, at, fail);
    if (typeof value === "string") checkString(value, s, fail);
    if (typeof value === "number") checkNumber(value, s, fail);
    if (Array.isArray(value)) this.#array(value, s, at, fail);
    else if (typeof value === "object" && value !== null) {
      this.#object(value as Record<string, unknown>, s, at, fail);
    }
  }

  #passes(value: unknown, schema: JsonSchema, at: string): boolean {
    const found: string[] = [];
    new Checker(this.root, found).check(value, schema, at);
    return found.length === 0;
  }

  #combinators(value: unknown, s: Record<string, unknown>, at: string, fail: Fail): void {
    const passes = (sub: JsonSchema) => this.#passes(value, sub, at);
    if (Array.isArray(s.allOf)) { for (const sub of s.allOf) this.check(value, sub, at); }
    if (Array.isArray(s.anyOf) && !s.anyOf.some(passes)) fail("matches none of anyOf");
    if (Array.isArray(s.oneOf)) {
      const matched = s.oneOf.filter(passes).length;
      if (matched !== 1) fail(`matches ${matched} of oneOf; expected exactly 1`);
    }
    if (s.not !== undefined && passes(s.not as JsonSchema)) fail(`matches "not"`);
  }

  #array(value: unknown[], s: Record<string, unknown>, at: string, fail: Fail): void {
    countBounds(value.length, s.minItems, s.maxItems, "items", fail);
    const keys = value.map((v) => JSON.stringify(canonical(v)));
    if (s.uniqueItems === true && new Set(keys).size < value.length) fail("expected unique items");
    const prefix = Array.isArray(s.prefixItems) ? s.prefixItems as JsonSchema[] : [];
    value.forEach((item, i) => {
      const sub = i < prefix.length ? prefix[i] : s.items as JsonSchema | undefined;
      if (sub !== undefined) this.check(item, sub, `${at}/${i}`);
    });
  }

  #object(value: Record<string, unknown>, s: Record<string, unknown>, at: string, fail: Fail) {
    const properties = (s.properties ?? {}) as Record<string, JsonSchema>;
    const keys = Object.keys(value);
    for (const name of Array.isArray(s.required) ? s.required as string[] : []) {
      if (!(name in value)) fail(`missing required property "${name}"`);
    }
    countBounds(keys.length, s.minProperties, s.maxProperties, "properties", fail);
    const extra = s.additionalProperties;
    for (const key of keys) {
      const path = `${at}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`;
      if (key in properties) this.check(value[key], properties[key], path);
      else if (extra === false) fail(`unexpected property "${key}"`);
      else if (typeof extra === "object" && extra !== null) {
        this.check(value[key], extra as JsonSchema, path);
      }
    }
  }
}

type Fail = (what: string) => void;

function checkType(value: unknown, s: Record<string, unknown>, fail: Fail): void {
  if (s.type === undefined) return;
  const types = (Array.isArray(s.type) ? [...s.type] : [s.type]) as string[];
  if (s.nullable === true) types.push("null");
  const actual = typeOf(value);
  const ok = types.includes(actual) || (actual === "integer" && types.includes("number"));
  if (!ok) fail(`expected ${types.join(" or ")}, found ${actual}`);
}

/** Checks a count against optional `min` / `max` bounds of `what` (items, properties). */
function countBounds(count: number, min: unknown, max: unknown, what: string, fail: Fail): void {
  if (typeof min === "number" && count < min) {
    fail(`expected at least ${min} ${what}, found ${count}`);
  }
  if (typeof max === "number" && count > max) {
    fail(`expected at most ${max} ${what}, found ${count}`);
  }
}

function checkString(value: string, s: Record<string, unknown>, fail: Fail): void {
  countBounds([...value].length, s.minLength, s.maxLength, "characters", fail);
  if (typeof s.pattern === "string" && !new RegExp(s.pattern, "u").test(value)) {
    fail(`expected to match /${s.pattern}/`);
  }
}

function checkNumber(value: number, s: Record<string, unknown>, fail: Fail): void {
  const bound = (key: string, ok: (limit: number) => boolean, words: string) => {
    const limit = s[key];
    if (typeof limit === "number" && !ok(limit)) fail(`expected ${words} ${limit}, found ${value}`);
  };
  bound("minimum", (l) => value >= l, ">=");
  bound("maximum", (l) => value <= l, "<=");
  bound("exclusiveMinimum", (l) => value > l, ">");
  bound("exclusiveMaximum", (l) => value < l, "<");
  bound("multipleOf", (l) => Number.isInteger(value / l), "a multiple of");
}
