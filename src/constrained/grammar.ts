/**
 * Grammars over bytes, as constrained decoding needs them: literals, byte classes, sequences,
 * alternatives, bounded or unbounded repetition and lazily resolved (recursive) rules. A grammar
 * is data; `byte_automaton.ts` runs it. Builders only: no JSON here (see `json_schema_grammar.ts`).
 */

/** A grammar rule; build with the functions of this file. */
export type Grammar =
  | { readonly kind: "bytes"; readonly id: number; readonly bytes: Uint8Array }
  | { readonly kind: "class"; readonly id: number; readonly set: Uint8Array }
  | { readonly kind: "seq"; readonly id: number; readonly items: readonly Grammar[] }
  | { readonly kind: "alt"; readonly id: number; readonly options: readonly Grammar[] }
  | {
    readonly kind: "repeat";
    readonly id: number;
    readonly item: Grammar;
    readonly min: number;
    readonly max: number;
  }
  | { readonly kind: "lazy"; readonly id: number; readonly resolve: () => Grammar };

let nextId = 0;
const utf8 = new TextEncoder();

/** The bytes of `text` (UTF-8), in that order. */
export function literal(text: string): Grammar {
  return { kind: "bytes", id: nextId++, bytes: utf8.encode(text) };
}

/** One byte for which `test` holds. */
export function byteClass(test: (byte: number) => boolean): Grammar {
  const set = Uint8Array.from({ length: 256 }, (_, b) => Number(test(b)));
  return { kind: "class", id: nextId++, set };
}

/** `items` one after another (none: the empty string). */
export function seq(...items: Grammar[]): Grammar {
  return items.length === 1 ? items[0] : { kind: "seq", id: nextId++, items };
}

/** Any one of `options` (at least one). */
export function alt(...options: Grammar[]): Grammar {
  if (options.length === 0) throw new Error("Cannot build a grammar: an alternative of nothing");
  return options.length === 1 ? options[0] : { kind: "alt", id: nextId++, options };
}

/** The empty string. */
export function empty(): Grammar {
  return seq();
}

/** `item` or nothing. */
export function optional(item: Grammar): Grammar {
  return alt(item, empty());
}

/** Options of {@link repeat}. */
export interface RepeatOptions {
  /** Fewest repetitions. Default 0. */
  min?: number;
  /** Most repetitions. Default unbounded. */
  max?: number;
  /** Written between two repetitions. */
  separator?: Grammar;
}

/**
 * `item` repeated between `min` and `max` times, with `separator` between repetitions. `item`
 * must not match the empty string when `max` is unbounded.
 */
export function repeat(
  item: Grammar,
  { min = 0, max = Infinity, separator }: RepeatOptions = {},
): Grammar {
  if (!(min >= 0 && max >= min)) {
    throw new Error(`Cannot build a grammar: repeat bounds [${min}, ${max}]`);
  }
  if (max === 0) return empty();
  if (separator === undefined) return { kind: "repeat", id: nextId++, item, min, max };
  const tail: Grammar = {
    kind: "repeat",
    id: nextId++,
    item: seq(separator, item),
    min: Math.max(min - 1, 0),
    max: max - 1,
  };
  const body = seq(item, tail);
  return min === 0 ? optional(body) : body;
}

/** A rule resolved when first used (recursive grammars refer to themselves through one). */
export function lazy(resolve: () => Grammar): Grammar {
  let resolved: Grammar | undefined;
  return { kind: "lazy", id: nextId++, resolve: () => resolved ??= resolve() };
}
