/**
 * Benchmark command lines: `benchArgs` parses them and answers an unknown flag (or a flag
 * without its value) with one usage line and exit 2, no stack; the checks turn a flag's text
 * into the number it must be or throw one line naming the script, the flag, what was expected
 * and what was received.
 */

import { parseArgs, type ParseArgsConfig } from "node:util";

/**
 * `parseArgs(config)` for benchmark `script`; on a flag it does not know, prints
 * `script: <what is wrong>; see --help` and exits 2.
 *
 * @example
 * ```ts
 * const { values } = benchArgs("bench/decode.ts", { args: Deno.args, options: {} });
 * ```
 */
export function benchArgs<T extends ParseArgsConfig>(
  script: string,
  config: T,
): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (err) {
    // parseArgs' first sentence says it ("Unknown option '--x'"); the rest is a hint on '--'.
    const reason = (err as Error).message.split(". ")[0];
    console.error(`${script}: ${reason}; see deno run -A ${script} --help`);
    Deno.exit(2);
  }
}

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
