/**
 * The error of a config that cannot be loaded: one line saying where (`file:line`, or the
 * `--set` override), which key, and what was expected and found. Carries no stack trace worth
 * printing; the CLI prints its message alone.
 */

import { InputError } from "../util/input_error.ts";

/** A config problem, as `<where>: <key.path>: <detail>` (key path left out when none applies). */
export class ConfigError extends InputError {
  /**
   * `where` is `file:line`, the file alone, or `--set key=value`; `keyPath` the YAML key path
   * (`stages[1].algorithm.algorithm_type`); `detail` says what was expected and found.
   *
   * @example
   * ```ts
   * new ConfigError("run.yaml:3", "buffer.batch_size", "expected an integer >= 1, found 0");
   * ```
   */
  constructor(
    readonly where: string,
    readonly keyPath: string | undefined,
    readonly detail: string,
  ) {
    super(keyPath === undefined ? `${where}: ${detail}` : `${where}: ${keyPath}: ${detail}`);
    this.name = "ConfigError";
  }
}
