/**
 * Typed access to a Hugging Face `config.json` object for the family table: every failure is one
 * InputError naming the file, the key, what was expected and what was found. Absent and null
 * keys read alike (HF writes null for "use the default").
 */

import { InputError } from "../util/input_error.ts";

/** A config object read key by key (see the file comment). */
export class ConfigKeys {
  readonly #json: Record<string, unknown>;

  constructor(json: unknown, readonly file: string) {
    if (!isRecord(json)) throw new InputError(`Cannot read ${file}: expected a JSON object`);
    this.#json = json;
  }

  /** Whether `key` is present and not null. */
  has(key: string): boolean {
    return this.#json[key] !== undefined && this.#json[key] !== null;
  }

  /** The raw value of `key`. */
  get(key: string): unknown {
    return this.#json[key];
  }

  /** Throws the InputError of `key` holding `value` where `expected` was expected. */
  fail(key: string, value: unknown, expected: string): never {
    throw new InputError(
      `Cannot read ${this.file}: key "${key}" is ${JSON.stringify(value)}; expected ${expected}`,
    );
  }

  #read<T>(key: string, fallback: T | undefined, ok: (v: unknown) => boolean, what: string): T {
    if (!this.has(key)) {
      if (fallback !== undefined) return fallback;
      throw new InputError(`Cannot read ${this.file}: key "${key}" is missing; expected ${what}`);
    }
    const value = this.#json[key];
    return ok(value) ? value as T : this.fail(key, value, what);
  }

  positiveInt(key: string, fallback?: number): number {
    return this.#read(
      key,
      fallback,
      (v) => Number.isSafeInteger(v) && (v as number) > 0,
      "a positive integer",
    );
  }

  positiveNumber(key: string, fallback?: number): number {
    return this.#read(key, fallback, (v) => typeof v === "number" && v > 0, "a positive number");
  }

  /** A positive number, or undefined when absent or null (an optional feature such as a cap). */
  optionalPositiveNumber(key: string): number | undefined {
    return this.has(key) ? this.positiveNumber(key) : undefined;
  }

  boolean(key: string, fallback?: boolean): boolean {
    return this.#read(key, fallback, (v) => typeof v === "boolean", "true or false");
  }

  string(key: string, fallback?: string): string {
    return this.#read(key, fallback, (v) => typeof v === "string", "a string");
  }

  /** One of `choices` (a string), or `fallback` when absent. */
  oneOf<T extends string>(key: string, choices: readonly T[], fallback?: T): T {
    return this.#read(
      key,
      fallback,
      (v) => choices.includes(v as T),
      oneOfText(choices),
    );
  }

  /** An optional token id (absent or null gives undefined). */
  tokenId(key: string): number | undefined {
    return this.has(key) ? this.#read(key, undefined, isTokenId, "a token id") : undefined;
  }
}

/** "one of "a", "b"": the expectation of a key taking one of `choices`. */
export function oneOfText(choices: readonly string[]): string {
  return `one of ${choices.map((c) => JSON.stringify(c)).join(", ")}`;
}

/** Whether `value` is a non-negative safe integer. */
export function isTokenId(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

/** Whether `value` is a plain JSON object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
