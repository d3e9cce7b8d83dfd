/**
 * `rft generate`: a quick look at what a model produces: loads a HF model directory, encodes the
 * prompts (optionally through the chat template) and prints each sample with its finish reason.
 */

import { loadModel } from "../model/policy.ts";
import { CliError } from "./cli_error.ts";
import { parseFlags } from "./parse_flags.ts";

const HELP = `Usage: ./rft generate --model DIR --prompt TEXT [--prompt TEXT ...] [options]

Options:
  --model DIR          Hugging Face model directory (config.json, safetensors, tokenizer)
  --adapter DIR        a PEFT LoRA adapter merged into the model first (default:
                       the model directory's own, as a LoRA run's checkpoints hold)
  --prompt TEXT        a prompt (repeatable)
  --chat               wrap each prompt as a user message in the model's chat template
  --n N                samples per prompt (default 1)
  --max-tokens N       most tokens per sample (default 64)
  --temperature T      0 = greedy (default 1)
  --top-k K            keep the K most likely tokens (default 0 = off)
  --top-p P            nucleus sampling threshold (default 1 = off)
  --seed N             sampler seed (default random)
  --logprobs           also print each token with its log-prob`;

/** Parses a numeric flag; throws a CliError naming it when it is not a number. */
function numberFlag(values: Record<string, unknown>, name: string, fallback?: number) {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value)) {
    throw new CliError(`--${name}: expected a number, received "${raw}"`);
  }
  return value;
}

/** Runs `rft generate`; returns the exit code. */
export async function generateCommand(args: string[]): Promise<number> {
  const parsed = parseFlags({
    args,
    options: {
      help: { type: "boolean", short: "h" },
      model: { type: "string" },
      adapter: { type: "string" },
      prompt: { type: "string", multiple: true },
      chat: { type: "boolean" },
      n: { type: "string" },
      "max-tokens": { type: "string" },
      temperature: { type: "string" },
      "top-k": { type: "string" },
      "top-p": { type: "string" },
      seed: { type: "string" },
      logprobs: { type: "boolean" },
    },
  }, HELP);
  const { values } = parsed;
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  if (!values.model) throw new CliError(`--model DIR is required\n${HELP}`);
  if (!values.prompt?.length) throw new CliError(`at least one --prompt is required\n${HELP}`);
  let model;
  try {
    model = await loadModel(values.model, { adapterDir: values.adapter });
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  const tokenizer = model.tokenizer;
  if (!tokenizer) {
    throw new CliError(`${values.model} has no tokenizer (tokenizer.json or char_tokenizer.json)`);
  }
  const prompts = values.prompt.map((p) =>
    values.chat
      ? tokenizer.applyChatTemplate([{ role: "user", content: p }], { addGenerationPrompt: true })
      : p
  );
  const started = performance.now();
  const samples = await model.generate(prompts, {
    n: numberFlag(values, "n", 1),
    maxTokens: numberFlag(values, "max-tokens", 64),
    temperature: numberFlag(values, "temperature", 1),
    topK: numberFlag(values, "top-k", 0),
    topP: numberFlag(values, "top-p", 1),
    seed: numberFlag(values, "seed"),
  });
  const seconds = (performance.now() - started) / 1000;
  for (const s of samples) {
    console.log(`--- prompt ${s.prompt} (${s.finishReason}, ${s.tokens.length} tokens)`);
    console.log(prompts[s.prompt] + s.text);
    if (values.logprobs) {
      s.tokens.forEach((t, i) =>
        console.log(`  ${JSON.stringify(tokenizer.decode([t]))} ${t} ${s.logprobs[i].toFixed(4)}`)
      );
    }
  }
  const tokens = samples.reduce((sum, s) => sum + s.tokens.length, 0);
  console.error(
    `${tokens} tokens in ${seconds.toFixed(2)} s (${(tokens / seconds).toFixed(1)} tokens/s)`,
  );
  model.destroy();
  return 0;
}
