/**
 * The kinds of entries the config schema is written in (`schema.ts`), the helpers that write
 * them, and the TypeScript type of the config each schema gives ({@link ConfigOf}): a section's
 * snake_case YAML keys become camelCase properties, present when the key has a default, is
 * required, or is filled by the loader (`derived`), optional otherwise. So the config types are
 * the schema's, with no hand-written twin: adding a key to the schema adds it to the types, the
 * loader, the reference table and the resolved YAML.
 */

import type { Args } from "../util/registry.ts";

/** Fields every schema entry has. */
interface FieldBase {
  /** One line for the reference table. */
  readonly doc: string;
  /** What an absent value means, in words, when the loader leaves it absent ("unlimited"). */
  readonly defaultDoc?: string;
  /**
   * The default in words, when the loader computes it from other keys (`derived_defaults.ts`
   * fills it, always): the key is then present in the loaded config.
   */
  readonly derived?: string;
}

/** Bounds of a number: `min`/`max` inclusive, `above` exclusive. */
export interface Range {
  readonly min?: number;
  readonly max?: number;
  readonly above?: number;
}

/**
 * A scalar. `path` marks a file system path, resolved against the config file's directory:
 * `exists` must exist (file or directory), `model` must be a directory with a config.json,
 * `dataset` must exist; a `model` or `dataset` path not on disk may be a Hub id in the local
 * Hub cache. `resolve` is only resolved.
 */
export interface ScalarField extends FieldBase, Range {
  readonly type: "string" | "int" | "number" | "bool";
  readonly default?: string | number | boolean;
  readonly required?: boolean;
  readonly path?: "exists" | "model" | "dataset" | "resolve";
}

/** One of a list of names; `aliases` maps other accepted spellings onto them. */
export interface EnumField extends FieldBase {
  readonly type: "enum";
  readonly values: () => readonly string[];
  readonly aliases?: Readonly<Record<string, string>>;
  readonly default?: string;
}

/** A component's `*_args`: any keys, scalar values, kept as written. Default `{}`. */
export interface ArgsField extends FieldBase {
  readonly type: "args";
}

/** A free mapping (`workflow_args`): any keys and values, kept as written. Default `{}`. */
export interface MapField extends FieldBase {
  readonly type: "map";
}

/**
 * A list of `of`; `length` fixes its size, `maxLength` bounds it; with `scalarItem` a scalar
 * written alone is read as a list of one. Default `default`, else `[]`.
 */
export interface ListField extends FieldBase {
  readonly type: "list";
  readonly of: FieldSchema;
  readonly length?: number;
  readonly maxLength?: number;
  readonly scalarItem?: boolean;
  readonly default?: readonly unknown[];
}

/** A mapping with known keys; an `optional` section is absent unless written. */
export interface SectionField extends FieldBase {
  readonly type: "section";
  readonly fields: Fields;
  readonly optional?: boolean;
}

/** One schema entry. */
export type FieldSchema = ScalarField | EnumField | ArgsField | MapField | ListField | SectionField;

/** The keys of a section, in YAML snake_case, in the order they are documented and written. */
export type Fields = Readonly<Record<string, FieldSchema>>;

/** The options of an entry: everything but its kind and doc line. */
type Options<F> = Omit<F, "type" | "doc">;

/** No options. */
type None = Record<never, never>;

/** An entry `B` with its options `O` (inferred from the options argument alone). */
type Entry<B, O> = Readonly<B> & NoInfer<O>;

/** The helper writing scalars of `type`; `o` holds the entry's default, range, path, ... */
const scalar =
  <T extends ScalarField["type"]>(type: T) =>
  <const O extends Options<ScalarField> = None>(
    doc: string,
    o?: O,
  ): Entry<{ type: T; doc: string }, O> => ({
    type,
    doc,
    ...o!,
  });

/** A string. */
export const str = scalar("string");
/** An integer. */
export const int = scalar("int");
/** A finite number. */
export const num = scalar("number");
/** true or false. */
export const bool = scalar("bool");

/** One of `values` (a list, or a function giving a registry's names when asked). */
export const oneOf = <
  const V extends string,
  const O extends Omit<Options<EnumField>, "values"> = None,
>(
  values: readonly V[] | (() => readonly V[]),
  doc: string,
  o?: O,
): Entry<{ type: "enum"; doc: string; values: () => readonly V[] }, O> => {
  const names = typeof values === "function" ? values : () => values;
  return { type: "enum", values: names, doc, ...o! };
};

/** A component's arguments. */
export const args = <const O extends Options<ArgsField> = None>(
  doc: string,
  o?: O,
): Entry<{ type: "args"; doc: string }, O> => ({ type: "args", doc, ...o! });

/** A free mapping. */
export const map = (doc: string): MapField => ({ type: "map", doc });

/** A list of `of`. */
export function list<
  const F extends FieldSchema,
  const O extends Omit<Options<ListField>, "of"> = None,
>(of: F, doc: string, o?: O): Entry<{ type: "list"; of: F; doc: string }, O> {
  return { type: "list", of, doc, ...o! };
}

/** A section of `fields`. */
export const section = <
  const S extends Fields,
  const O extends Omit<Options<SectionField>, "fields"> = None,
>(
  fields: S,
  doc: string,
  o?: O,
): Entry<{ type: "section"; fields: S; doc: string }, O> => ({
  type: "section",
  fields,
  doc,
  ...o!,
});

/** `snake_case` as `camelCase`, the spelling of a YAML key inside the code. */
export function camelCase<K extends string>(key: K): CamelCase<K> {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()) as CamelCase<K>;
}

/** The type-level {@link camelCase}. */
export type CamelCase<K extends string> = K extends `${infer Head}_${infer C}${infer Rest}`
  ? `${Head}${Uppercase<C>}${CamelCase<Rest>}`
  : K;

/**
 * When a config's values are looked at: `input`, as validated against the schema (derived keys
 * may be absent), or `loaded`, after the loader filled every derived key.
 */
export type Phase = "input" | "loaded";

/** The value of schema entry `F` in phase `P`. */
export type ConfigOf<F, P extends Phase = "loaded"> = F extends { type: "string" } ? string
  : F extends { type: "int" | "number" } ? number
  : F extends { type: "bool" } ? boolean
  : F extends { type: "enum"; values: () => readonly (infer V)[] } ? V
  : F extends { type: "args" } ? Args
  : F extends { type: "map" } ? Record<string, unknown>
  : F extends { type: "list"; of: infer O; length: 2 } ? [ConfigOf<O, P>, ConfigOf<O, P>]
  : F extends { type: "list"; of: infer O } ? ConfigOf<O, P>[]
  : F extends { type: "section"; fields: infer S extends Fields } ? SectionOf<S, P>
  : never;

/** Whether a key of entry `F` is always present in phase `P`. */
type Present<F, P extends Phase> = F extends { required: true } | { default: unknown } ? true
  : F extends { type: "args" | "map" | "list" } ? true
  : F extends { type: "section"; optional: true } ? false
  : F extends { type: "section" } ? true
  : F extends { derived: string } ? P extends "loaded" ? true : false
  : false;

/** The camelCase object of a section's `fields` in phase `P`. */
export type SectionOf<S extends Fields, P extends Phase = "loaded"> = Flat<
  & {
    -readonly [K in keyof S as Present<S[K], P> extends true ? CamelCase<K & string> : never]:
      ConfigOf<S[K], P>;
  }
  & {
    -readonly [K in keyof S as Present<S[K], P> extends true ? never : CamelCase<K & string>]?:
      ConfigOf<S[K], P>;
  }
>;

/** One object type of an intersection (readable in editors and errors). */
type Flat<T> = { [K in keyof T]: T[K] };
