/**
 * The `rft` command line: parses the command and hands over to its module. Each command lives
 * in its own file under `src/cli/`; this file only routes and prints usage.
 */

import { VERSION } from "../version.ts";
import { exportCommand } from "./export.ts";
import { generateCommand } from "./generate.ts";
import { infoCommand } from "./info.ts";
import { runCommand } from "./run.ts";
import { serveCommand } from "./serve.ts";
import { plotCommand } from "./plot.ts";
import { CliError } from "./cli_error.ts";

interface Command {
  summary: string;
  run(args: string[]): Promise<number>;
}

const COMMANDS: Record<string, Command> = {
  run: {
    summary: "train a policy as a config says (explorer, buffer, trainer; see README)",
    run: runCommand,
  },
  generate: {
    summary: "sample continuations of prompts from a Hugging Face model directory",
    run: generateCommand,
  },
  info: {
    summary: "show the WebGPU adapter, features, limits and kernel choices; run a self-check",
    run: infoCommand,
  },
  plot: {
    summary: "draw a run's metrics.jsonl as an HTML page of charts",
    run: plotCommand,
  },
  export: {
    summary: "write a model as an ONNX graph (--onnx OUT.onnx --model DIR)",
    run: exportCommand,
  },
  serve: {
    summary: "serve a model over an OpenAI-compatible API (chat, completions, streaming)",
    run: serveCommand,
  },
};

const USAGE = `rft ${VERSION}: reinforcement fine-tuning on WebGPU

Usage: ./rft <command> [options]

Commands:
${Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`).join("\n")}
  test       run the test suite (deno test through the launcher)

Options:
  -h, --help     show this help (also: ./rft <command> --help)
  -v, --version  print the version

Environment:
  DENO_WEBGPU_BACKEND=vulkan|gl   force a WebGPU backend
  RFT_DEBUG=2                     print the GPU time of every dispatch
  RFT_AUTOTUNE=0                  skip kernel autotuning, use default variants
  RFT_CACHE_DIR=DIR               where autotune results are cached
`;

/** Runs the CLI with `args` and returns the exit code. */
export async function main(args: string[]): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined || name === "-h" || name === "--help" || name === "help") {
    console.log(USAGE);
    return 0;
  }
  if (name === "-v" || name === "--version") {
    console.log(`rft ${VERSION}`);
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    console.error(
      `rft: unknown command "${name}"; expected one of: ${Object.keys(COMMANDS).join(", ")}, test`,
    );
    return 2;
  }
  try {
    return await command.run(rest);
  } catch (err) {
    if (err instanceof CliError) {
      console.error(`rft ${name}: ${err.message}`);
      return err.exitCode;
    }
    throw err;
  }
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
