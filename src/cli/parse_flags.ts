/** Command-line flags of an `rft` command, parsed by `node:util`'s parseArgs. */

import { parseArgs, type ParseArgsConfig } from "node:util";
import { CliError } from "./cli_error.ts";

/**
 * `parseArgs(config)`; an unknown flag or a missing value becomes a CliError with the command's
 * `help` text after the message.
 */
export function parseFlags<T extends ParseArgsConfig>(
  config: T,
  help: string,
): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (err) {
    throw new CliError(`${(err as Error).message}\n${help}`);
  }
}
