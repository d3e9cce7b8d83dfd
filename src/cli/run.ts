/**
 * `./rft run config.yaml [--set key.path=value ...] [--plugin-dir DIR ...]`: loads the plugins
 * (`./plugins`, each `--plugin-dir` and the config's `plugin_dirs`), then the config (any problem: one line, exit 2, before
 * GPU work), then runs it, printing progress and a summary. Bad input found while running (an
 * `InputError`: components, data, model files) is one line and exit 2 too; a failure of the run
 * itself exits 1. Ctrl-C lets the step under way end and writes a checkpoint, then exits 130; a
 * second Ctrl-C exits at once. What was written stays and the same command resumes.
 */

import { ConfigError } from "../config/config_error.ts";
import { loadConfig } from "../config/load_config.ts";
import { configPluginDirs } from "../config/plugin_dirs.ts";
import { loadPlugins, PluginError } from "../run/run_plugins.ts";
import { runConfig } from "../run/run.ts";
import { formatSummary } from "./run_summary.ts";
import { isInputError, oneLineMessage } from "../util/input_error.ts";
import { CliError } from "./cli_error.ts";
import { parseFlags } from "./parse_flags.ts";
import { printLine } from "../util/status_lines.ts";

/** `--help` of `rft run`. */
export const RUN_HELP = `Usage: ./rft run CONFIG.yaml [options]

Options:
  --set KEY.PATH=VALUE   override a config key (YAML snake_case path), repeatable
  --plugin-dir DIR       load every *.ts plugin in DIR (besides ./plugins), repeatable
  -h, --help             show this help`;

/** Runs the `run` command. */
export async function runCommand(args: string[]): Promise<number> {
  const parsed = parseFlags({
    args,
    allowPositionals: true,
    options: {
      set: { type: "string", multiple: true },
      "plugin-dir": { type: "string", multiple: true },
      help: { type: "boolean", short: "h" },
    },
  }, "run");
  if (parsed.values.help) {
    console.log(RUN_HELP);
    return 0;
  }
  if (parsed.positionals.length !== 1) {
    throw new CliError(
      `expected one config file, received ${
        parsed.positionals.length ? parsed.positionals.map((p) => `"${p}"`).join(", ") : "none"
      } (./rft run CONFIG.yaml; ./rft run --help)`,
    );
  }
  const log = printLine;
  try {
    const plugins = await loadPlugins([
      { path: "plugins", optional: true },
      ...(parsed.values["plugin-dir"] ?? []).map((path) => ({ path, optional: false })),
      ...(await configPluginDirs(parsed.positionals[0])).map((path) => ({ path, optional: true })),
    ]);
    for (const p of plugins) {
      log(
        `plugin ${p.file}: ${p.registered.length ? p.registered.join(", ") : "registered nothing"}`,
      );
    }
  } catch (err) {
    if (err instanceof PluginError) throw new CliError(oneLineMessage(err));
    throw err;
  }
  let config;
  try {
    config = await loadConfig(parsed.positionals[0], { overrides: parsed.values.set ?? [] });
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(oneLineMessage(err));
    throw err;
  }
  if (config.ignoredTrinityKeys.length > 0) {
    log(`ignored Trinity keys: ${config.ignoredTrinityKeys.join(", ")}`);
  }
  for (const note of config.notes) log(note);
  const controller = new AbortController();
  let interrupts = 0;
  const stop = () => {
    if (++interrupts > 1) {
      log("stopped now (what was written stays; run the same command to resume)");
      Deno.exit(130);
    }
    log(
      "stopping: the step under way ends and a checkpoint is written (Ctrl-C again stops at " +
        "once; run the same command to resume)",
    );
    controller.abort(new Error("interrupted"));
  };
  Deno.addSignalListener("SIGINT", stop);
  try {
    const summary = await runConfig(config, { log, signal: controller.signal });
    for (const line of formatSummary(summary)) console.log(line);
    return 0;
  } catch (err) {
    if (controller.signal.aborted) return 130;
    if (isInputError(err)) throw new CliError(oneLineMessage(err), 2);
    throw new CliError((err as Error).message, 1);
  } finally {
    Deno.removeSignalListener("SIGINT", stop);
  }
}
