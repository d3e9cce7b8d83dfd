/**
 * `rft serve`: serves a Hugging Face model directory, frozen, over the OpenAI-compatible API
 * (`src/serve/openai_server.ts`) until Ctrl-C. Listens on 127.0.0.1 unless `--host` says
 * otherwise; `--api-key` (or `RFT_API_KEY`) makes every /v1 request carry the key;
 * `--tool-call-parser` names how replies are read as tool calls (default: the format the chat
 * template writes), `--plugin-dir` loads plugins first (e.g. a parser of their own).
 */

import { basename, resolve } from "node:path";
import { loadModel } from "../model/policy.ts";
import { OpenAIServer } from "../serve/openai_server.ts";
import { DEFAULT_MAX_N, ServedModel } from "../serve/served_model.ts";
import { TOOL_CALL_PARSERS } from "../tool_calls/mod.ts";
import { loadPlugins } from "../run/run_plugins.ts";
import { PolicyRolloutModel } from "../workflow/policy_rollout_model.ts";
import { CliError } from "./cli_error.ts";
import { parseFlags } from "./parse_flags.ts";

const HELP = `Usage: ./rft serve --model DIR [options]

Serves the model over an OpenAI-compatible API: POST /v1/chat/completions, POST /v1/completions,
GET /v1/models, GET /health, GET /metrics.

Options:
  --model DIR               Hugging Face model directory (config.json, safetensors, tokenizer)
  --adapter DIR             a PEFT LoRA adapter merged into the model first (default:
                            the model directory's own, as a LoRA run's checkpoints hold)
  --name NAME               the model's id in requests (default: the directory's name)
  --host HOST               address to listen on (default 127.0.0.1: this machine only)
  --port N                  port (default 8000; 0 picks a free one)
  --api-key KEY             require "Authorization: Bearer KEY" (default: $RFT_API_KEY, else none)
  --max-prompt-tokens N     longest prompt accepted (default: half the model's positions)
  --max-tokens N            most tokens per sample (default: the rest of the positions)
  --max-n N                 most samples per prompt (default ${DEFAULT_MAX_N})
  --temperature T           sampling temperature of requests that give none (default 1)
  --seed N                  seed of requests that give none (default 0)
  --tool-call-parser NAME   how replies are read as tool calls: ${
  TOOL_CALL_PARSERS.names().join(", ")
} or a
                            plugin's (default: the format the model's chat template writes)
  --plugin-dir DIR          load the plugins (*.ts) of DIR first`;

/** A positive integer flag, or `fallback` when absent; throws a CliError naming it otherwise. */
function intFlag(values: Record<string, unknown>, name: string, fallback: number, min = 1): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new CliError(`--${name}: expected an integer >= ${min}, received "${raw}"`);
  }
  return value;
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
  }, HELP).values;
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  if (!values.model) throw new CliError(`--model DIR is required\n${HELP}`);
  const temperature = Number(values.temperature ?? 1);
  if (!Number.isFinite(temperature) || temperature < 0) {
    throw new CliError(`--temperature: expected a number >= 0, received "${values.temperature}"`);
  }
  let model;
  try {
    if (values["plugin-dir"]) await loadPlugins([{ path: values["plugin-dir"], optional: false }]);
    const parser = values["tool-call-parser"];
    if (parser !== undefined) TOOL_CALL_PARSERS.get(parser); // an unknown name fails here
    model = await loadModel(values.model, { adapterDir: values.adapter });
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  const positions = model.config.maxPositions;
  const maxPromptTokens = intFlag(values, "max-prompt-tokens", Math.floor(positions / 2));
  const maxResponseTokens = intFlag(values, "max-tokens", positions - maxPromptTokens);
  let rollout;
  try {
    rollout = new PolicyRolloutModel(model, {
      maxPromptTokens,
      maxResponseTokens,
      defaults: { temperature, topP: 1, topK: 0 },
      seed: intFlag(values, "seed", 0, 0),
    });
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  const id = values.name ?? basename(resolve(values.model));
  const served = new ServedModel(id, rollout, {
    maxN: intFlag(values, "max-n", DEFAULT_MAX_N),
    toolCallParser: values["tool-call-parser"],
  });
  const server = await OpenAIServer.start({
    models: [served],
    hostname: values.host,
    port: intFlag(values, "port", 8000, 0),
    apiKey: values["api-key"] ?? Deno.env.get("RFT_API_KEY"),
  });
  const tools = served.toolCallParser
    ? `tool calls read as ${served.toolCallParser}`
    : "no tool-call parser";
  console.error(
    `serving "${id}" at ${server.url}/v1 (prompts <= ${maxPromptTokens} tokens, ` +
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
