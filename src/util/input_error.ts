/**
 * The error of bad input given to rft: a config, a dataset, model files, a tokenizer or a
 * plugin that cannot be used as it is. Thrown where the input is read, with a one-line message
 * naming the file (or key, or line), what was expected and what was found; the CLI prints the
 * message alone and exits 2. Failures of the run itself are ordinary errors (exit 1).
 */

/** Bad input (see the file comment); `cause` keeps the underlying error for debugging. */
export class InputError extends Error {
  /**
   * @example
   * ```ts
   * throw new InputError(`Cannot read ${path}: expected a parquet file, found text`);
   * ```
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "InputError";
  }
}

/**
 * Whether `err` is bad input: an {@link InputError}, or an error caused by one (a wrapper
 * that adds where the input was used keeps its input nature).
 */
export function isInputError(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof InputError) return true;
  }
  return false;
}

/** ANSI escape sequences (colours) that Deno puts in some error messages. */
// deno-lint-ignore no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;

/**
 * The message of `err` as one line without colour codes: its first line, plus where the first
 * `at <file:line:column>` line of the rest points (Deno's syntax and module errors put the
 * place there, under a code frame).
 *
 * @example
 * ```ts
 * oneLineMessage(new Error("SyntaxError: Expression expected\n  |\n    at file:///p.ts:1:11"));
 * // "SyntaxError: Expression expected (at file:///p.ts:1:11)"
 * ```
 */
export function oneLineMessage(err: unknown): string {
  const text = ((err as Error)?.message ?? String(err)).replace(ANSI, "");
  const [first, ...rest] = text.split("\n");
  const at = rest.map((line) => /^\s*at (.+)$/.exec(line)?.[1]).find((place) => place);
  return at === undefined || first.includes(at) ? first.trim() : `${first.trim()} (at ${at})`;
}
