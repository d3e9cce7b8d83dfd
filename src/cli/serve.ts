/**
 * `rft serve`: serves a model (a Hugging Face directory, a checkpoint, or a stage or run
 * directory's latest checkpoint), frozen, over the OpenAI-compatible API
 * (`src/serve/openai_server.ts`) until Ctrl-C. Listens on 127.0.0.1 unless `--host` says
 * otherwise; `--api-key` (or `RFT_API_KEY`) makes every /v1 request carry the key;
 * `--tool-call-parser` names how replies are read as tool calls (default: the format the chat
 * template writes), `--plugin-dir` loads plugins first (e.g. a parser of their own).
 */

import { basename, resolve } from "node:path";
import { OpenAIServer } from "../serve/openai_server.ts";
import { DEFAULT_MAX_N, ServedModel } from "../serve/served_model.ts";
import { TOOL_CALL_PARSERS } from "../tool_calls/mod.ts";
import { loadPlugins } from "../run/run_plugins.ts";
import { PolicyRolloutModel } from "../workflow/policy_rollout_model.ts";
import { CliError } from "./cli_error.ts";
import { loadCliModel } from "./model_directory.ts";
import { plainPromptNote, plainPromptRunConfig } from "./chat_template_note.ts";
import { intFlag, numberFlag } from "./number_flags.ts";
import { parseFlags } from "./parse_flags.ts";
import { oneLineMessage } from "../util/input_error.ts";
import { printLine } from "../util/status_lines.ts";

/** `--help` of `rft serve`. */
export const SERVE_HELP = `Usage: ./rft serve --model DIR [options]

Serves the model over an OpenAI-compatible API: POST /v1/chat/completions, POST /v1/completions,
GET /v1/models, GET /health, GET /metrics.

Options:
  --model DIR               Hugging Face model directory, checkpoint (checkpoints/step_N), or a
                            stage or run directory (its latest checkpoint)
  --adapter DIR             a PEFT LoRA adapter merged into the model first (default:
                            the model directory's own, as a LoRA run's checkpoints hold)
  --name NAME               the model's id in requests (default: the directory's name)
  --host HOST               address to listen on (default 127.0.0.1: this machine only)
  --port N                  port (default 8000; 0 picks a free one)
  --api-key KEY             require "Authorization: Bearer KEY" (default: $RFT_API_KEY, else none)
  --max-prompt-tokens N     longest prompt accepted (default: half the model's positions)
  --max-tokens N            most tokens per sample (default, and at most: the rest of the
                            positions)
  --max-n N                 most samples per prompt (default ${DEFAULT_MAX_N})
  --temperature T           sampling temperature of requests that give none (default 1)
  --seed N                  seed of requests that give none (default 0)
  --tool-call-parser NAME   how replies are read as tool calls: ${
  TOOL_CALL_PARSERS.names().join(", ")
} or a
                            plugin's (default: the format the model's chat template writes)
  --plugin-dir DIR          load the plugins (*.ts) of DIR first`;

/**
 * Throws a CliError when `hostname:port` cannot be listened on (a port in use, an address not
 * of this machine), before the model is loaded; the port is freed again at once.
 */
function checkCanListen(hostname: string, port: number): void {
  try {
    Deno.listen({ hostname, port }).close();
  } catch (err) {
    throw new CliError(`cannot listen on ${hostname}:${port}: ${oneLineMessage(err)}`);
  }
}

/** Runs `rft serve` until interrupted; returns the exit code. */
export async function serveCommand(args: string[]): Promise<number> {
  const values = parseFlags({
    args,
    options: {
      help: { type: "boolean", short: "h" },
      model: { type: "string" },
      adapter: { type: "string" },
      name: { type: "string" },
      host: { type: "string" },
      port: { type: "string" },
      "api-key": { type: "string" },
      "max-prompt-tokens": { type: "string" },
      "max-tokens": { type: "string" },
      "max-n": { type: "string" },
      temperature: { type: "string" },
      seed: { type: "string" },
      "tool-call-parser": { type: "string" },
      "plugin-dir": { type: "string" },
    },
  }, "serve").values;
  if (values.help) {
    console.log(SERVE_HELP);
    return 0;
  }
  if (!values.model) throw new CliError("--model DIR is required (./rft serve --help)");
  const temperature = numberFlag(values, "temperature", { fallback: 1, min: 0 })!;
  const port = intFlag(values, "port", 8000, 0);
  const seed = intFlag(values, "seed", 0, 0);
  const maxN = intFlag(values, "max-n", DEFAULT_MAX_N);
  for (const name of ["max-prompt-tokens", "max-tokens"]) intFlag(values, name, 1);
  try {
    if (values["plugin-dir"]) await loadPlugins([{ path: values["plugin-dir"], optional: false }]);
    const parser = values["tool-call-parser"];
    if (parser !== undefined) TOOL_CALL_PARSERS.get(parser); // an unknown name fails here
  } catch (err) {
    throw new CliError(oneLineMessage(err));
  }
  checkCanListen(values.host ?? "127.0.0.1", port);
  const { model, dir } = await loadCliModel(values.model, values.adapter, {
    needsTokenizer: true,
  });
  const positions = model.config.maxPositions;
  const maxPromptTokens = intFlag(values, "max-prompt-tokens", Math.floor(positions / 2));
  if (maxPromptTokens >= positions) {
    model.destroy();
    throw new CliError(
      `--max-prompt-tokens ${maxPromptTokens}: the model has ${positions} positions, so prompts of at most ${
        positions - 1
      } tokens leave room for a response`,
    );
  }
  const room = positions - maxPromptTokens;
  let maxResponseTokens = intFlag(values, "max-tokens", room);
  if (maxResponseTokens > room) {
    printLine(
      `note: --max-tokens ${maxResponseTokens} is more than the model's ${positions} positions leave after prompts of up to ${maxPromptTokens} tokens; responses get at most ${room}`,
    );
    maxResponseTokens = room;
  }
  let rollout;
  try {
    rollout = new PolicyRolloutModel(model, {
      maxPromptTokens,
      maxResponseTokens,
      defaults: { temperature, topP: 1, topK: 0 },
      seed,
    });
  } catch (err) {
    model.destroy();
    throw new CliError(oneLineMessage(err));
  }
  const id = values.name ?? basename(resolve(values.model));
  const served = new ServedModel(id, rollout, {
    maxN,
    toolCallParser: values["tool-call-parser"],
  });
  let server;
  try {
    server = await OpenAIServer.start({
      models: [served],
      hostname: values.host,
      port,
      apiKey: values["api-key"] ?? Deno.env.get("RFT_API_KEY"),
    });
  } catch (err) {
    rollout.destroy();
    model.destroy();
    throw new CliError(
      `cannot listen on ${values.host ?? "127.0.0.1"}:${port}: ${oneLineMessage(err)}`,
    );
  }
  const plainConfig = await plainPromptRunConfig(dir);
  if (plainConfig) printLine(plainPromptNote(id, plainConfig));
  const tools = served.toolCallParser
    ? `tool calls read as ${served.toolCallParser}`
    : "no tool-call parser";
  printLine(
    `serving "${id}" at ${server.url}/v1 (model ${dir}; prompts <= ${maxPromptTokens} tokens, ` +
      `responses <= ${maxResponseTokens}; ${tools}); Ctrl-C stops`,
  );
  const { promise: interrupted, resolve: stop } = Promise.withResolvers<void>();
  Deno.addSignalListener("SIGINT", stop);
  await interrupted;
  Deno.removeSignalListener("SIGINT", stop);
  await server.close();
  rollout.destroy();
  model.destroy();
  return 0;
}
