/**
 * The JSON objects of OpenAI's completion API built from a {@link Completion}: chat completions
 * (a message with `tool_calls` and `finish_reason: "tool_calls"` when the reply called tools),
 * text completions, their streamed chunks (`chat.completion.chunk`, `text_completion`; tool
 * calls stream as OpenAI sends them: index, id, type and name first, then argument fragments)
 * and the log-prob shapes of each (chat: `logprobs.content[]`; text: `tokens` /
 * `token_logprobs` / `top_logprobs` / `text_offset`), and vLLM's `prompt_token_ids` /
 * `token_ids` when asked. Log-probs cover every generated token, a final stop token included.
 * No HTTP here: `openai_server.ts` sends what this file builds.
 */

import type { Tokenizer } from "../model/tokenizer.ts";
import type { CompletionRequest } from "./completion_request.ts";
import { legacyFunctionCall } from "./legacy_functions.ts";
import { echoed, type EchoedChoice } from "./prompt_echo.ts";
import type { Completion, CompletionChoice } from "./served_model.ts";
import type { TokenLogprob } from "./top_logprobs.ts";

/** What every object of one response shares. */
export interface ResponseHeader {
  /** `chatcmpl-...` or `cmpl-...`. */
  id: string;
  /** Unix seconds. */
  created: number;
  model: string;
}

/** A fresh header for a response of `kind` from `model`. */
export function responseHeader(kind: "chat" | "text", model: string): ResponseHeader {
  const prefix = kind === "chat" ? "chatcmpl" : "cmpl";
  return {
    id: `${prefix}-${crypto.randomUUID().replaceAll("-", "")}`,
    created: Math.floor(Date.now() / 1000),
    model,
  };
}

/** The non-streamed response body of `completion`. */
export function completionBody(
  request: CompletionRequest,
  completion: Completion,
  header: ResponseHeader,
  tokenizer: Tokenizer,
): Record<string, unknown> {
  const ids = (choice: CompletionChoice) =>
    request.returnTokenIds ? { token_ids: choice.tokens } : {};
  const choices = completion.choices.map((choice, index) =>
    request.kind === "chat"
      ? {
        index,
        message: chatMessage(request, choice),
        logprobs: request.logprobs
          ? { content: chatLogprobs(choice, 0, choice.tokens.length, tokenizer) }
          : null,
        finish_reason: finishReason(request, choice),
        ...ids(choice),
      }
      : {
        index,
        text: echoed(choice, completion.echoes?.[choice.promptIndex]).text,
        logprobs: request.logprobs
          ? textLogprobs(echoed(choice, completion.echoes?.[choice.promptIndex]), tokenizer)
          : null,
        finish_reason: choice.finishReason,
        ...(request.returnTokenIds
          ? { prompt_token_ids: completion.prompts[choice.promptIndex] }
          : {}),
        ...ids(choice),
      }
  );
  return {
    ...header,
    object: request.kind === "chat" ? "chat.completion" : "text_completion",
    choices,
    usage: usage(completion),
    ...(request.kind === "chat" && request.returnTokenIds
      ? { prompt_token_ids: completion.prompts[0] }
      : {}),
  };
}

/** The assistant message of a chat choice (a legacy `function_call` when asked so). */
function chatMessage(request: CompletionRequest, choice: CompletionChoice) {
  const calls = choice.reply?.toolCalls ?? [];
  const callFields = request.legacyFunctions
    ? legacyFunctionCall(calls)
    : calls.length > 0
    ? { tool_calls: calls }
    : {};
  return {
    role: "assistant",
    content: choice.reply ? choice.reply.content : choice.text,
    refusal: null,
    ...callFields,
  };
}

/** A chat choice's finish reason (`function_call` for a legacy call). */
function finishReason(request: CompletionRequest, choice: CompletionChoice): string {
  const legacy = request.legacyFunctions && choice.finishReason === "tool_calls";
  return legacy ? "function_call" : choice.finishReason;
}

/**
 * The streamed chunks of `completion`, choice by choice: per generated token one chunk with
 * its text piece (the pieces add up to the choice's text) and log-probs, then one with the
 * finish reason; a usage chunk when asked.
 */
export function completionChunks(
  request: CompletionRequest,
  completion: Completion,
  header: ResponseHeader,
  tokenizer: Tokenizer,
): Record<string, unknown>[] {
  const chat = request.kind === "chat";
  const object = chat ? "chat.completion.chunk" : "text_completion";
  const chunks: Record<string, unknown>[] = [];
  completion.choices.forEach((choice, index) => {
    const parts = chat
      ? chatDeltas(request, choice, tokenizer)
      : textDeltas(request, echoed(choice, completion.echoes?.[choice.promptIndex]), tokenizer);
    const last = parts.at(-1)!;
    if (request.returnTokenIds) last.token_ids = choice.tokens;
    chunks.push(...parts.map((part) => ({ ...header, object, choices: [{ index, ...part }] })));
  });
  if (request.includeUsage) {
    chunks.push({ ...header, object, choices: [], usage: usage(completion) });
  }
  return chunks;
}

/** A choice's streamed parts (each a chunk's choice without its index). */
type Delta = Record<string, unknown>;

/** Text completion parts: one per token with its text piece, then the finish reason. */
function textDeltas(
  request: CompletionRequest,
  choice: EchoedChoice,
  tokenizer: Tokenizer,
): Delta[] {
  let offset = 0;
  const parts: Delta[] = textPieces(choice, tokenizer).map((piece, t) => {
    const logprobs = request.logprobs ? textLogprobs(choice, tokenizer, t, t + 1, offset) : null;
    offset += piece.length;
    return { text: piece, logprobs, finish_reason: null };
  });
  parts.push({ text: "", logprobs: null, finish_reason: choice.finishReason });
  return parts;
}

/**
 * Chat parts: the role; the content, a piece per token when it is the generated text as is,
 * else whole; each tool call's index, id, type and name, then its arguments in fragments; the
 * finish reason. Log-probs go with the token pieces, or all with the first part after the role.
 */
function chatDeltas(
  request: CompletionRequest,
  choice: CompletionChoice,
  tokenizer: Tokenizer,
): Delta[] {
  const parts: Delta[] = [{ delta: { role: "assistant", content: "" } }];
  const content = choice.reply ? choice.reply.content : choice.text;
  const calls = choice.reply?.toolCalls ?? [];
  if (content === choice.text && calls.length === 0) {
    textPieces(choice, tokenizer).forEach((piece, t) => {
      const logprobs = request.logprobs
        ? { content: chatLogprobs(choice, t, t + 1, tokenizer) }
        : null;
      parts.push({ delta: { content: piece }, logprobs });
    });
  } else {
    if (content) parts.push({ delta: { content } });
    (request.legacyFunctions ? calls.slice(0, 1) : calls).forEach((call, index) => {
      const { name, arguments: args } = call.function;
      const fragments = argumentFragments(args as string);
      if (request.legacyFunctions) {
        parts.push({ delta: { function_call: { name, arguments: "" } } });
        for (const fragment of fragments) {
          parts.push({ delta: { function_call: { arguments: fragment } } });
        }
        return;
      }
      const head = { index, id: call.id, type: "function", function: { name, arguments: "" } };
      parts.push({ delta: { tool_calls: [head] } });
      for (const fragment of fragments) {
        parts.push({ delta: { tool_calls: [{ index, function: { arguments: fragment } }] } });
      }
    });
    if (request.logprobs && parts.length > 1) {
      parts[1].logprobs = { content: chatLogprobs(choice, 0, choice.tokens.length, tokenizer) };
    }
  }
  parts.push({ delta: {}, finish_reason: finishReason(request, choice) });
  return parts.map((p) => ({ logprobs: null, finish_reason: null, ...p }));
}

/** JSON text in the fragments a streaming model would send: strings, numbers and punctuation. */
function argumentFragments(json: string): string[] {
  return json.match(/"(?:[^"\\]|\\.)*"?|[^"]+?(?=")|[^"]+$/g) ?? [json];
}

/**
 * The text piece each token adds to the choice's text: the growth of the longest prefix of the
 * text that the tokens decoded so far agree with (a token ending inside a character, or after
 * the stop text begins, adds nothing); the last piece takes what is left.
 */
function textPieces(choice: EchoedChoice, tokenizer: Tokenizer): string[] {
  const { tokens, text } = choice;
  let shown = 0;
  return tokens.map((_, t) => {
    const decoded = tokenizer.decode(tokens.slice(0, t + 1));
    let agree = 0;
    while (agree < decoded.length && agree < text.length && decoded[agree] === text[agree]) agree++;
    const end = t === tokens.length - 1 ? text.length : Math.max(shown, agree);
    const piece = text.slice(shown, end);
    shown = end;
    return piece;
  });
}

/** Chat log-probs of tokens `from` .. `to` of `choice`. */
function chatLogprobs(choice: CompletionChoice, from: number, to: number, tokenizer: Tokenizer) {
  const entry = (id: number, logprob: number) => {
    const token = tokenizer.decode([id]);
    return { token, logprob, bytes: [...new TextEncoder().encode(token)] };
  };
  return choice.tokens.slice(from, to).map((id, i) => ({
    ...entry(id, choice.logprobs[from + i]),
    top_logprobs: (choice.topLogprobs?.[from + i] ?? []).map((alt) => entry(alt.id, alt.logprob)),
  }));
}

/** Text-completion log-probs of tokens `from` .. `to` of `choice`, offsets from `offset`. */
function textLogprobs(
  choice: EchoedChoice,
  tokenizer: Tokenizer,
  from = 0,
  to = choice.tokens.length,
  offset = 0,
) {
  const tokens = choice.tokens.slice(from, to).map((id) => tokenizer.decode([id]));
  const textOffset: number[] = [];
  let at = offset;
  for (const token of tokens) {
    textOffset.push(at);
    at += token.length;
  }
  const top = (alternatives: TokenLogprob[]) =>
    Object.fromEntries(alternatives.map((alt) => [tokenizer.decode([alt.id]), alt.logprob]));
  return {
    tokens,
    token_logprobs: choice.logprobs.slice(from, to),
    top_logprobs: choice.topLogprobs ? choice.topLogprobs.slice(from, to).map(top) : null,
    text_offset: textOffset,
  };
}

/** OpenAI's `usage` of `completion`. */
function usage(completion: Completion) {
  const promptTokens = completion.prompts.reduce((sum, p) => sum + p.length, 0);
  const completionTokens = completion.choices.reduce((sum, c) => sum + c.tokens.length, 0);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
}
