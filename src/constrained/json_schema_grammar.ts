/**
 * Grammars of JSON text: any JSON value, any object, and the values a JSON schema describes
 * (`type`, `properties` / `required` / `additionalProperties: false`, `items`, `minItems` /
 * `maxItems`, `enum`, `const`, `anyOf` / `oneOf`, `$ref` into `$defs` / `definitions`, OpenAPI's
 * `nullable`). Objects are written with their properties in the schema's order (optional ones may
 * be left out), separators as `", "` / `": "` or without the space. What a grammar cannot say
 * (`minimum`, `pattern`, `minLength`, `format`, `allOf`, ...) is left to `json_schema_check.ts`,
 * which the caller runs on the finished text: such a keyword widens the grammar, never narrows it.
 */

import { alt, byteClass, type Grammar, lazy, literal, optional, repeat, seq } from "./grammar.ts";

/** A JSON schema (an object; `true` / `{}` accept anything). */
export type JsonSchema = Readonly<Record<string, unknown>> | boolean;

/** At most one space where JSON allows whitespace between tokens. */
const space = () => optional(literal(" "));

/** `,` between members or items, a space after it or not. */
export function comma(): Grammar {
  return seq(literal(","), space());
}

/** `:` after a key, a space after it or not. */
export function colon(): Grammar {
  return seq(literal(":"), space());
}

/** A JSON string: `"`, plain characters or escapes, `"`. */
export function jsonString(): Grammar {
  const plain = byteClass((b) => b >= 0x20 && b !== 0x22 && b !== 0x5c);
  const hex = byteClass((b) => /[0-9a-fA-F]/.test(String.fromCharCode(b)));
  const escape = seq(
    literal("\\"),
    alt(
      byteClass((b) => '"\\/bfnrt'.includes(String.fromCharCode(b))),
      seq(literal("u"), hex, hex, hex, hex),
    ),
  );
  return seq(literal('"'), repeat(alt(plain, escape)), literal('"'));
}

const digit = () => byteClass((b) => b >= 0x30 && b <= 0x39);

/** A JSON integer: `-?(0|[1-9][0-9]*)`. */
export function jsonInteger(): Grammar {
  const nonZero = byteClass((b) => b >= 0x31 && b <= 0x39);
  return seq(optional(literal("-")), alt(literal("0"), seq(nonZero, repeat(digit()))));
}

/** A JSON number: an integer, an optional fraction and an optional exponent. */
export function jsonNumber(): Grammar {
  const fraction = seq(literal("."), repeat(digit(), { min: 1 }));
  const exponent = seq(
    byteClass((b) => b === 0x65 || b === 0x45),
    optional(byteClass((b) => b === 0x2b || b === 0x2d)),
    repeat(digit(), { min: 1 }),
  );
  return seq(jsonInteger(), optional(fraction), optional(exponent));
}

/** `{` members `}` where each member is a key and `value`. */
function objectOf(key: Grammar, value: Grammar): Grammar {
  const member = seq(key, colon(), value);
  return seq(literal("{"), repeat(member, { separator: comma() }), literal("}"));
}

/** `[` items `]` with between `min` and `max` items. */
function arrayOf(item: Grammar, min = 0, max = Infinity): Grammar {
  return seq(literal("["), repeat(item, { min, max, separator: comma() }), literal("]"));
}

/** Any JSON value. */
export function anyJsonValue(): Grammar {
  const value: Grammar = lazy(() =>
    alt(
      objectOf(jsonString(), value),
      arrayOf(value),
      jsonString(),
      jsonNumber(),
      literal("true"),
      literal("false"),
      literal("null"),
    )
  );
  return value;
}

/** Any JSON object (OpenAI's `json_object` response format). */
export function anyJsonObject(): Grammar {
  return objectOf(jsonString(), anyJsonValue());
}

/**
 * The grammar of the JSON values `schema` accepts, or wider where the schema says more than a
 * grammar can (see the file comment). Throws on a `$ref` that does not resolve.
 */
export function jsonSchemaGrammar(schema: JsonSchema): Grammar {
  return new SchemaGrammars(schema).of(schema, "#");
}

const TYPE_NAMES = ["object", "array", "string", "number", "integer", "boolean", "null"];

/** Builds the grammars of one root schema, sharing the rule of each `$ref` target. */
class SchemaGrammars {
  readonly #refs = new Map<string, Grammar>();

  constructor(readonly root: JsonSchema) {}

  of(schema: JsonSchema, path: string): Grammar {
    if (schema === true || schema === false) return anyJsonValue();
    if (typeof schema !== "object" || schema === null) {
      throw new Error(`Cannot read the JSON schema at ${path}: expected an object or a boolean`);
    }
    if (typeof schema.$ref === "string") return this.#ref(schema.$ref, path);
    if ("const" in schema) return literal(JSON.stringify(schema.const));
    if (Array.isArray(schema.enum)) {
      return alt(...schema.enum.map((v) => literal(JSON.stringify(v))));
    }
    const branches = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
    if (Array.isArray(branches) && branches.length > 0) {
      return alt(...branches.map((b, i) => this.of(b, `${path}/anyOf/${i}`)));
    }
    const types = typeof schema.type === "string"
      ? [schema.type]
      : Array.isArray(schema.type)
      ? schema.type as string[]
      : this.#impliedTypes(schema);
    const known = types.filter((t) => TYPE_NAMES.includes(t));
    if (known.length === 0) return anyJsonValue();
    if (schema.nullable === true && !known.includes("null")) known.push("null");
    return alt(...known.map((t) => this.#typed(schema, t, path)));
  }

  /** The types a schema without `type` allows, read from its keywords (none: any). */
  #impliedTypes(schema: Readonly<Record<string, unknown>>): string[] {
    if ("properties" in schema || "required" in schema) return ["object"];
    if ("items" in schema || "prefixItems" in schema) return ["array"];
    return [];
  }

  #typed(schema: Readonly<Record<string, unknown>>, type: string, path: string): Grammar {
    switch (type) {
      case "object":
        return this.#object(schema, path);
      case "array": {
        const items = (schema.items ?? true) as JsonSchema;
        const min = typeof schema.minItems === "number" ? schema.minItems : 0;
        const max = typeof schema.maxItems === "number" ? schema.maxItems : Infinity;
        return arrayOf(this.of(items, `${path}/items`), min, max);
      }
      case "string":
        return jsonString();
      case "integer":
        return jsonInteger();
      case "number":
        return jsonNumber();
      case "boolean":
        return alt(literal("true"), literal("false"));
      default:
        return literal("null");
    }
  }

  /** An object with the schema's properties in order (required ones always present). */
  #object(schema: Readonly<Record<string, unknown>>, path: string): Grammar {
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
    const names = Object.keys(properties);
    if (names.length === 0) {
      const extra = schema.additionalProperties;
      if (extra === false) return literal("{}");
      const value = typeof extra === "object" && extra !== null
        ? this.of(extra as JsonSchema, `${path}/additionalProperties`)
        : anyJsonValue();
      return objectOf(jsonString(), value);
    }
    const required = new Set(Array.isArray(schema.required) ? schema.required as string[] : []);
    const member = (name: string) =>
      seq(
        literal(JSON.stringify(name)),
        colon(),
        this.of(properties[name], `${path}/properties/${name}`),
      );
    // after[i]: properties i.. each preceded by a comma; first[i]: properties i.., the first bare.
    const after: Grammar[] = [seq()];
    const first: Grammar[] = [seq()];
    for (let i = names.length - 1; i >= 0; i--) {
      const present = (lead: Grammar[]) => seq(...lead, member(names[i]), after[0]);
      const withComma = present([comma()]);
      const bare = present([]);
      after.unshift(required.has(names[i]) ? withComma : alt(withComma, after[0]));
      first.unshift(required.has(names[i]) ? bare : alt(bare, first[0]));
    }
    return seq(literal("{"), first[0], literal("}"));
  }

  #ref(ref: string, path: string): Grammar {
    let rule = this.#refs.get(ref);
    if (!rule) {
      const target = resolveRef(this.root, ref);
      if (target === undefined) {
        throw new Error(`Cannot read the JSON schema at ${path}: "$ref" ${ref} does not resolve`);
      }
      rule = lazy(() => this.of(target, ref));
      this.#refs.set(ref, rule);
    }
    return rule;
  }
}

/** The schema `ref` (`#`, `#/$defs/x`, `#/definitions/x`, any JSON pointer) points to in `root`. */
export function resolveRef(root: JsonSchema, ref: string): JsonSchema | undefined {
  if (!ref.startsWith("#")) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(1).split("/").slice(1)) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (typeof node !== "object" || node === null || !(key in node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node as JsonSchema;
}
