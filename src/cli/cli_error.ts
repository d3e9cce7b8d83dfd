/** An error the CLI reports as one line (no stack trace) with a chosen exit code. */

/** A user-facing error: printed as `rft <command>: <message>`, exits with `exitCode`. */
export class CliError extends Error {
  constructor(message: string, readonly exitCode = 2) {
    super(message);
    this.name = "CliError";
  }
}
