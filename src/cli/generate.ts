/**
 * `rft generate`: a quick look at what a model produces: loads a model (an HF directory, a
 * checkpoint, or a stage or run directory's latest checkpoint), encodes the prompts (optionally
 * through the chat template) and prints each sample with its finish reason. A `--max-tokens`
 * beyond what the model's positions leave after the longest prompt is lowered to fit, with a note.
 */

import type { Tokenizer } from "../model/tokenizer.ts";
import { oneLineMessage } from "../util/input_error.ts";
import { printLine } from "../util/status_lines.ts";
import { CliError } from "./cli_error.ts";
import { loadCliModel } from "./model_directory.ts";
import { plainPromptNote, plainPromptRunConfig } from "./chat_template_note.ts";
import { numberFlag } from "./number_flags.ts";
import { parseFlags } from "./parse_flags.ts";

/** `--help` of `rft generate`. */
export const GENERATE_HELP =
  `Usage: ./rft generate --model DIR --prompt TEXT [--prompt TEXT ...] [options]

Options:
  --model DIR          Hugging Face model directory, checkpoint (checkpoints/step_N), or a stage
                       or run directory (its latest checkpoint; of a run of several stages, the
                       stage written last)
  --adapter DIR        a PEFT LoRA adapter merged into the model first (default:
                       the model directory's own, as a LoRA run's checkpoints hold)
  --prompt TEXT        a prompt (repeatable)
  --chat               wrap each prompt as a user message in the model's chat template
  --n N                samples per prompt (default 1)
  --max-tokens N       most tokens per sample (default 64, lowered to what the model's
                       positions leave after the longest prompt)
  --temperature T      0 = greedy (default 1)
  --top-k K            keep the K most likely tokens (default 0 = off)
  --top-p P            nucleus sampling threshold (default 1 = off)
  --seed N             sampler seed (default random)
  --logprobs           also print each token with its log-prob`;

const DEFAULT_MAX_TOKENS = 64;

/** The sampling flags, checked before the model is loaded. */
function samplingFlags(values: Record<string, unknown>) {
  return {
    n: numberFlag(values, "n", { fallback: 1, min: 1, integer: true })!,
    maxTokens: numberFlag(values, "max-tokens", { min: 1, integer: true }),
    temperature: numberFlag(values, "temperature", { fallback: 1, min: 0 })!,
    topK: numberFlag(values, "top-k", { fallback: 0, min: 0, integer: true })!,
    topP: numberFlag(values, "top-p", { fallback: 1, min: Number.MIN_VALUE, max: 1 })!,
    seed: numberFlag(values, "seed", { min: 0, integer: true }),
  };
}

/**
 * The prompts as text (through the chat template with `chat`) and token ids; a one-line error
 * for one that cannot be encoded.
 */
function encodePrompts(
  tokenizer: Tokenizer,
  prompts: string[],
  chat: boolean,
): { text: string; ids: number[] }[] {
  return prompts.map((p, i) => {
    let text = p;
    try {
      if (chat) {
        text = tokenizer.applyChatTemplate([{ role: "user", content: p }], {
          addGenerationPrompt: true,
        });
      }
      const ids = tokenizer.encode(text);
      if (ids.length === 0) throw new Error("it encodes to no tokens");
      return { text, ids };
    } catch (err) {
      throw new CliError(`--prompt ${i + 1} (${JSON.stringify(p)}): ${oneLineMessage(err)}`);
    }
  });
}

/**
 * The most tokens per sample: `asked` (default 64) lowered to the positions left after the
 * longest prompt, with a note when lowered; a CliError when a prompt fills the positions.
 */
export function fitMaxTokens(
  asked: number | undefined,
  promptLengths: readonly number[],
  positions: number,
): { maxTokens: number; note?: string } {
  const longest = Math.max(...promptLengths);
  const room = positions - longest;
  if (room < 1) {
    const which = promptLengths.indexOf(longest) + 1;
    throw new CliError(
      `--prompt ${which} has ${longest} tokens; the model has ${positions} positions, so no token is left to generate`,
    );
  }
  const wanted = asked ?? DEFAULT_MAX_TOKENS;
  if (wanted <= room) return { maxTokens: wanted };
  return {
    maxTokens: room,
    note: `note: --max-tokens ${wanted}${
      asked === undefined ? " (the default)" : ""
    } is more than the model's ${positions} positions leave after a ${longest}-token prompt; generating at most ${room}`,
  };
}

/** Runs `rft generate`; returns the exit code. */
export async function generateCommand(args: string[]): Promise<number> {
  const { values } = parseFlags({
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
  }, "generate");
  if (values.help) {
    console.log(GENERATE_HELP);
    return 0;
  }
  if (!values.model) throw new CliError("--model DIR is required (./rft generate --help)");
  if (!values.prompt?.length) {
    throw new CliError("at least one --prompt TEXT is required (./rft generate --help)");
  }
  const sampling = samplingFlags(values);
  const { model, dir } = await loadCliModel(values.model, values.adapter, {
    needsTokenizer: true,
  });
  try {
    const tokenizer = model.tokenizer;
    if (!tokenizer) {
      throw new CliError(
        `--model ${values.model}: no tokenizer (tokenizer.json or char_tokenizer.json)`,
      );
    }
    if (values.chat) {
      const plainConfig = await plainPromptRunConfig(dir);
      if (plainConfig) printLine(plainPromptNote(values.model, plainConfig));
    }
    const prompts = encodePrompts(tokenizer, values.prompt, values.chat ?? false);
    const fit = fitMaxTokens(
      sampling.maxTokens,
      prompts.map((p) => p.ids.length),
      model.config.maxPositions,
    );
    if (fit.note) printLine(fit.note);
    const started = performance.now();
    const samples = await model.generate(prompts.map((p) => p.ids), {
      ...sampling,
      maxTokens: fit.maxTokens,
    });
    const seconds = (performance.now() - started) / 1000;
    for (const s of samples) {
      console.log(`--- prompt ${s.prompt} (${s.finishReason}, ${s.tokens.length} tokens)`);
      console.log(prompts[s.prompt].text + s.text);
      if (values.logprobs) {
        s.tokens.forEach((t, i) =>
          console.log(`  ${JSON.stringify(tokenizer.decode([t]))} ${t} ${s.logprobs[i].toFixed(4)}`)
        );
      }
    }
    const tokens = samples.reduce((sum, s) => sum + s.tokens.length, 0);
    printLine(
      `${tokens} tokens in ${seconds.toFixed(2)} s (${(tokens / seconds).toFixed(1)} tokens/s)`,
    );
  } finally {
    model.destroy();
  }
  return 0;
}
