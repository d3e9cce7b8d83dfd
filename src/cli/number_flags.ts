/** Numeric flags of the `rft` commands, each checked with a one-line error naming the flag. */

import { CliError } from "./cli_error.ts";

/** Bounds and default of a numeric flag. */
export interface NumberFlagOptions {
  /** Value when the flag is absent. */
  fallback?: number;
  /** Smallest value accepted (inclusive). */
  min?: number;
  /** Largest value accepted (inclusive). */
  max?: number;
  /** Whether the value must be an integer. */
  integer?: boolean;
}

/**
 * Flag `name` of parsed `values` as a number within the options' bounds, `fallback` when absent
 * (undefined when absent without a fallback); throws a CliError naming the flag otherwise.
 */
export function numberFlag(
  values: Record<string, unknown>,
  name: string,
  { fallback, min, max, integer = false }: NumberFlagOptions = {},
): number | undefined {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const value = typeof raw === "string" && raw.trim() !== "" ? Number(raw) : NaN;
  const kind = integer ? "an integer" : "a number";
  const range = [min !== undefined ? `>= ${min}` : "", max !== undefined ? `<= ${max}` : ""]
    .filter((r) => r).join(" and ");
  const ok = Number.isFinite(value) && (!integer || Number.isInteger(value)) &&
    (min === undefined || value >= min) && (max === undefined || value <= max);
  if (!ok) {
    throw new CliError(`--${name}: expected ${kind}${range ? ` ${range}` : ""}, received "${raw}"`);
  }
  return value;
}

/** {@link numberFlag} for an integer flag with a default. */
export function intFlag(
  values: Record<string, unknown>,
  name: string,
  fallback: number,
  min = 1,
): number {
  return numberFlag(values, name, { fallback, min, integer: true })!;
}
