/**
 * `echo: true` of text completions: each choice's text and log-probs start with its prompt's.
 * The prompt's log-probs come from one teacher-forced pass (the first token has none: `null`, as
 * OpenAI writes it), its `top_logprobs` from the same pass as the generated tokens'. Only the
 * response's shape changes: samples, usage and recordings keep the generated tokens alone.
 */

import type { PolicyModel } from "../model/policy.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import type { CompletionChoice } from "./served_model.ts";
import type { TokenLogprob, TopLogprobs } from "./top_logprobs.ts";

/** A prompt as echoed before the choices of it. */
export interface PromptEcho {
  /** The prompt's text (a token-id prompt decoded). */
  text: string;
  tokens: number[];
  /** Per prompt token, its log-prob (the first: null), when the request asked for log-probs. */
  logprobs: (number | null)[];
  /** Per prompt token, its alternatives (the first: none), when the request asked for them. */
  topLogprobs?: TokenLogprob[][];
}

/** What {@link promptEcho} needs to score a prompt. */
export interface EchoScorer {
  model: PolicyModel;
  topLogprobs: TopLogprobs;
  tokenizer: Tokenizer;
}

/**
 * The echo of `prompt` (its ids `tokens`): log-probs under `temperature` when `logprobs`, and
 * the `k` most likely alternatives per token when `k` > 0.
 */
export async function promptEcho(
  scorer: EchoScorer,
  prompt: string | number[],
  tokens: number[],
  options: { logprobs: boolean; k: number; temperature: number },
): Promise<PromptEcho> {
  const text = typeof prompt === "string" ? prompt : scorer.tokenizer.decode(prompt);
  if (!options.logprobs) return { text, tokens, logprobs: [] };
  const [scores] = await scorer.model.logprobs([tokens], { temperature: options.temperature });
  const echo: PromptEcho = {
    text,
    tokens,
    logprobs: [null, ...scores.slice(0, tokens.length - 1)],
  };
  if (options.k > 0) {
    const rest = await scorer.topLogprobs.compute(
      tokens.slice(0, 1),
      tokens.slice(1),
      options.k,
      options.temperature,
    );
    echo.topLogprobs = [[], ...rest];
  }
  return echo;
}

/** A choice as `echo` returns it: the prompt's tokens, text and log-probs first. */
export interface EchoedChoice extends Omit<CompletionChoice, "logprobs"> {
  logprobs: (number | null)[];
}

/** `choice` with `echo` (its prompt's echo) in front. */
export function echoed(choice: CompletionChoice, echo: PromptEcho | undefined): EchoedChoice {
  if (!echo) return choice;
  const top = choice.topLogprobs && echo.topLogprobs
    ? { topLogprobs: [...echo.topLogprobs, ...choice.topLogprobs] }
    : {};
  return {
    ...choice,
    ...top,
    tokens: [...echo.tokens, ...choice.tokens],
    text: echo.text + choice.text,
    logprobs: [...echo.logprobs, ...choice.logprobs],
  };
}
