/**
 * `rft plot`: turns a run's metrics.jsonl into a self-contained HTML page of SVG charts
 * (see `src/monitor/plot.ts`) and prints the path written. Reads files only; no GPU.
 */

import { writePlot } from "../monitor/plot.ts";
import { CliError } from "./cli_error.ts";
import { checkOutputFile } from "./output_path.ts";
import { parseFlags } from "./parse_flags.ts";

const HELP = `Usage: ./rft plot RUN_DIR [--out FILE]

Reads RUN_DIR/metrics.jsonl and writes an HTML page of line charts (reward, eval accuracy,
loss, KL, entropy, response length, tokens/s) and a table of the last row.

Options:
  --out FILE   where to write the page (default RUN_DIR/plot.html)`;

/** Runs `rft plot`; returns the exit code. */
export async function plotCommand(args: string[]): Promise<number> {
  const parsed = parseFlags({
    args,
    allowPositionals: true,
    options: { help: { type: "boolean", short: "h" }, out: { type: "string" } },
  }, "plot");
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  if (positionals.length !== 1) {
    throw new CliError(
      `expected one RUN_DIR, received ${
        positionals.length ? positionals.map((p) => `"${p}"`).join(", ") : "none"
      } (./rft plot --help)`,
    );
  }
  if (values.out !== undefined) await checkOutputFile("--out", values.out);
  let path;
  try {
    path = await writePlot(positionals[0], values.out);
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  console.log(path);
  return 0;
}
