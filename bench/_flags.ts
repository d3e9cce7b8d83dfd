/**
 * Checks of benchmark command-line values: each turns a flag's text into the number it must be
 * or throws one line naming the script, the flag, what was expected and what was received.
 */

/**
 * `text`, the value of `--flag` of `script`, as an integer >= `min` (default 1).
 *
 * @example
 * ```ts
 * const reps = integerFlag("bench/train.ts", "reps", values.reps); // "3" -> 3
 * ```
 */
export function integerFlag(script: string, flag: string, text: string, min = 1): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min) {
    throw new Error(
      `Cannot run ${script}: expected --${flag} to be an integer >= ${min}, received "${text}"`,
    );
  }
  return value;
}
