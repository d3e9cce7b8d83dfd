/**
 * Checks of the paths a command will write (`--onnx FILE`, `--transformers-js DIR`, `--out
 * FILE`), made before any model is loaded, so that a directory given for a file, a file given
 * for a directory or a missing parent is one line naming the flag.
 */

import { dirname } from "node:path";
import { CliError } from "./cli_error.ts";

/** What is at `path`: "file", "directory", or undefined when nothing is. */
async function kindAt(path: string): Promise<"file" | "directory" | undefined> {
  try {
    return (await Deno.stat(path)).isDirectory ? "directory" : "file";
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return undefined;
    }
    throw err;
  }
}

/** Throws a CliError unless flag `flag`'s `path` names a file that can be written. */
export async function checkOutputFile(flag: string, path: string): Promise<void> {
  if (await kindAt(path) === "directory") {
    throw new CliError(`${flag} ${path}: expected a file to write, found a directory`);
  }
  const parent = dirname(path);
  const kind = await kindAt(parent);
  if (kind !== "directory") {
    throw new CliError(
      `${flag} ${path}: expected an existing directory ${parent} to write into, found ${
        kind === "file" ? "a file" : "nothing"
      }`,
    );
  }
}

/** Throws a CliError when flag `flag`'s `path` (a directory to write into) is a file. */
export async function checkOutputDirectory(flag: string, path: string): Promise<void> {
  if (await kindAt(path) === "file") {
    throw new CliError(`${flag} ${path}: expected a directory to write into, found a file`);
  }
}
