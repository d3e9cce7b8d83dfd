/**
 * Typed readers of the fields of a JSON request body: each returns the value, undefined when the
 * field is absent or null, or throws a 400 naming the field, what was expected and what was
 * received. Shared by the parsers of completion requests, messages, tools and response formats.
 */

import { badRequest } from "./api_error.ts";

/** A JSON object's fields. */
export type Fields = Readonly<Record<string, unknown>>;

/** A short rendering of a received value for messages. */
export function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Whether `value` is a JSON object (not null, not a list). */
export function isObject(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `value` as an object; throws naming `param` otherwise. */
export function objectAt(value: unknown, param: string): Fields {
  if (!isObject(value)) {
    throw badRequest(
      param,
      `Cannot read "${param}": expected an object, received ${describe(value)}`,
    );
  }
  return value;
}

/** Throws naming the first key of `fields` outside `known` (`param`: the object's name). */
export function onlyKnown(fields: Fields, known: readonly string[], param: string): void {
  const unknown = Object.keys(fields).find((k) => !known.includes(k));
  if (unknown !== undefined) {
    throw badRequest(
      `${param}.${unknown}`,
      `Cannot read "${param}": unsupported field "${unknown}"; supported: ${known.join(", ")}`,
    );
  }
}

/** A field of JSON type `type`; `param` names it in errors (default: its key). */
function typedField<T>(
  fields: Fields,
  key: string,
  type: "string" | "boolean",
  param: string,
): T | undefined {
  const value = fields[key];
  if (value === undefined || value === null) return undefined;
  const actual: string = typeof value;
  if (actual !== type) {
    const expected = type === "string" ? "a string" : "true or false";
    throw badRequest(
      param,
      `Cannot read "${param}": expected ${expected}, received ${describe(value)}`,
    );
  }
  return value as T;
}

/** A string field; `param` names it in errors (default: its key). */
export function stringField(fields: Fields, key: string, param = key): string | undefined {
  return typedField<string>(fields, key, "string", param);
}

/** A boolean field. */
export function booleanField(fields: Fields, key: string, param = key): boolean | undefined {
  return typedField<boolean>(fields, key, "boolean", param);
}

/** A number in [min, max]. */
export function numberField(
  fields: Fields,
  key: string,
  min: number,
  max: number,
): number | undefined {
  const value = fields[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) {
    throw badRequest(
      key,
      `Cannot read "${key}": expected a number in [${min}, ${max}], received ${describe(value)}`,
    );
  }
  return value;
}

/** An integer in [min, max]. */
export function integerField(
  fields: Fields,
  key: string,
  min: number,
  max: number,
): number | undefined {
  const value = fields[key];
  if (value === undefined || value === null) return undefined;
  if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) {
    throw badRequest(
      key,
      `Cannot read "${key}": expected an integer in [${min}, ${max}], received ${describe(value)}`,
      (value as number) > max ? "limit_exceeded" : undefined,
    );
  }
  return value as number;
}

/** A field that must be one of `choices` (absent: undefined). */
export function choiceField<C extends string>(
  fields: Fields,
  key: string,
  choices: readonly C[],
  param = key,
): C | undefined {
  const value = fields[key];
  if (value === undefined || value === null) return undefined;
  if (!choices.includes(value as C)) {
    throw badRequest(
      param,
      `Cannot read "${param}": expected one of ${
        choices.map((c) => `"${c}"`).join(", ")
      }, received ${describe(value)}`,
    );
  }
  return value as C;
}
