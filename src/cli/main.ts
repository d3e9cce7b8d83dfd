/**
 * The `rft` command line: parses the command and hands over to its module. Each command lives
 * in its own file under `src/cli/`; this file routes, prints usage, keeps the heartbeat (a line
 * when a command is quiet for 8 s) and turns any error into one line (`error_line.ts`).
 */

import { VERSION } from "../version.ts";
import { exportCommand } from "./export.ts";
import { generateCommand } from "./generate.ts";
import { infoCommand } from "./info.ts";
import { runCommand } from "./run.ts";
import { serveCommand } from "./serve.ts";
import { plotCommand } from "./plot.ts";
import { errorExit } from "./error_line.ts";
import { checkEnvironment } from "./environment.ts";
import { startHeartbeat } from "../monitor/heartbeat.ts";
import { endUpdatingLine, printLine } from "../util/status_lines.ts";
import { knownNames } from "../util/registry.ts";

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
    summary: "sample continuations of prompts from a model (HF directory, checkpoint or run)",
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
    summary: "write a model as an ONNX graph (--onnx OUT.onnx) or a transformers.js " +
      "directory (--transformers-js OUT_DIR)",
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
  RFT_AUTOTUNE_SECONDS=S          most seconds a process spends tuning kernels (default 120)
  RFT_CACHE_DIR=DIR               where autotune results are cached
  RFT_WEIGHT_TEXTURES_MIB=M       most MiB of weights copied into textures (default 512)
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
    const known = knownNames(name, [...Object.keys(COMMANDS), "test"]).replace(/^known: /, "");
    printLine(
      `rft: unknown command "${name}"; expected one of: ${
        known.replace(/\. Did you mean (.*)\?$/, "; did you mean $1?")
      } (./rft --help)`,
    );
    return 2;
  }
  const heartbeat = startHeartbeat();
  try {
    checkEnvironment();
    return await command.run(rest);
  } catch (err) {
    const { line, code } = errorExit(name, err);
    endUpdatingLine();
    printLine(line);
    return code;
  } finally {
    heartbeat.stop();
    endUpdatingLine();
  }
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
