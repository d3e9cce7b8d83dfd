/**
 * Command-line flags of an `rft` command, parsed by `node:util`'s parseArgs, with its errors
 * rewritten as one line each: an unknown flag with the known ones and the nearest as a
 * suggestion, a flag missing its value, a value given to a switch, a stray argument. A negative
 * number after a flag that takes a value is that value (`--seed -1`), so the flag's own check
 * can say what range it expects.
 */

import { parseArgs, type ParseArgsConfig } from "node:util";
import { knownNames } from "../util/registry.ts";
import { CliError } from "./cli_error.ts";

/**
 * `parseArgs(config)` for `./rft <command>`; a parse error becomes a one-line CliError that
 * points at `./rft <command> --help`.
 */
export function parseFlags<T extends ParseArgsConfig>(
  config: T,
  command: string,
): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs({ ...config, args: negativeValuesJoined(config) } as T);
  } catch (err) {
    throw new CliError(`${flagProblem(err, config)} (./rft ${command} --help lists the flags)`);
  }
}

/** `config.args` with `--flag -3` written `--flag=-3` where `--flag` takes a value. */
function negativeValuesJoined(config: ParseArgsConfig): string[] | undefined {
  const args = config.args;
  if (!args) return args;
  const takesValue = (arg: string) => {
    const name = /^--([^=]+)$/.exec(arg)?.[1];
    return name !== undefined && config.options?.[name]?.type === "string";
  };
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const next = args[i + 1];
    if (takesValue(args[i]) && next !== undefined && /^-\.?\d/.test(next)) {
      joined.push(`${args[i]}=${next}`);
      i++;
    } else joined.push(args[i]);
  }
  return joined;
}

/** The flags of `config` as written on the command line (`--model`). */
function flagNames(config: ParseArgsConfig): string[] {
  return Object.keys(config.options ?? {}).map((name) => `--${name}`);
}

/** What is wrong, in one line, from a parseArgs error. */
function flagProblem(err: unknown, config: ParseArgsConfig): string {
  const { code, message } = err as { code?: string; message: string };
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? "";
  const flag = quoted.split(" ")[0];
  switch (code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION": {
      const known = knownNames(flag.split("=")[0], flagNames(config)).replace(/^known: /, "");
      return `unknown flag ${flag}; known: ${
        known.replace(/\. Did you mean (.*)\?$/, "; did you mean $1?")
      }`;
    }
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      return message.includes("does not take an argument")
        ? `${flag} is a switch and takes no value`
        : `${flag} needs a value (${flag}=VALUE where the value starts with "-")`;
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL":
      return `unexpected argument "${flag}": this command takes only flags`;
    default:
      return message.split("\n")[0];
  }
}
