/**
 * How an error that ends an `rft` command is reported: one line `rft <command>: <message>` and
 * an exit code, never a stack trace. A CliError carries its own code; bad input (an InputError,
 * or a file the user named that is missing, unreadable or unwritable, also when wrapped as the
 * `cause` of another error) exits 2; anything else is
 * a failure of rft itself, exit 1, whose stack `RFT_DEBUG=1` adds.
 */

import { isInputError, oneLineMessage } from "../util/input_error.ts";
import { CliError } from "./cli_error.ts";

/** File system errors that come from paths the user gave. */
const PATH_ERRORS = [
  Deno.errors.NotFound,
  Deno.errors.PermissionDenied,
  Deno.errors.AlreadyExists,
  Deno.errors.IsADirectory,
  Deno.errors.NotADirectory,
  Deno.errors.InvalidData,
];

/** Whether `err`, or an error it wraps (`cause`), is a file system error of a path. */
function isPathError(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (PATH_ERRORS.some((kind) => e instanceof kind)) return true;
  }
  return false;
}

/** The line to print and the exit code for `err` ending `./rft <command>`. */
export function errorExit(command: string, err: unknown): { line: string; code: number } {
  const line = (message: string) => `rft ${command}: ${message}`;
  if (err instanceof CliError) return { line: line(err.message), code: err.exitCode };
  if (isInputError(err) || isPathError(err)) {
    return { line: line(oneLineMessage(err)), code: 2 };
  }
  const stack = Deno.env.get("RFT_DEBUG") && err instanceof Error && err.stack
    ? `\n${err.stack}`
    : "";
  return {
    line: line(`${oneLineMessage(err)} (a failure of rft itself; RFT_DEBUG=1 shows where)${stack}`),
    code: 1,
  };
}
