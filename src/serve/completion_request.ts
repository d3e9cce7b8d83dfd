/**
 * Reads the JSON body of `POST /v1/chat/completions` and `POST /v1/completions` into one
 * checked {@link CompletionRequest}: every field typed and within the server's limits, unknown
 * fields refused, so a bad request is a 400 naming the field before any model work. Does not
 * tokenize (the prompt length is checked where the prompt is encoded) and does not sample.
 */

import type { ChatMessage } from "../model/chat_template.ts";
import { badRequest } from "./api_error.ts";

/** Limits a request must stay within (the served model's settings). */
export interface RequestLimits {
  /** Most samples per prompt (`n`). */
  maxN: number;
  /** Most tokens per sample (`max_tokens`); also its default. */
  maxTokens: number;
}

/** A chat or text completion request, checked. */
export interface CompletionRequest {
  kind: "chat" | "text";
  /** The `model` asked for; absent: the server's policy. */
  model?: string;
  /** Chat: the conversation. */
  messages: ChatMessage[];
  /** Text completions: the prompts, each text or token ids. */
  prompts: (string | number[])[];
  n: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  maxTokens: number;
  /** Texts that end a sample (not included in the returned text). */
  stop: string[];
  /** Return the log-prob of each generated token. */
  logprobs: boolean;
  /** Most likely alternatives returned per token (0 = none). */
  topLogprobs: number;
  stream: boolean;
  /** Streaming: send a last chunk with the token usage. */
  includeUsage: boolean;
  seed?: number;
}

/** Most alternatives per token a request may ask for (OpenAI's limit). */
export const MAX_TOP_LOGPROBS = 20;

/** Most stop texts per request (OpenAI's limit). */
const MAX_STOP = 4;

const SHARED_FIELDS = [
  "model",
  "n",
  "temperature",
  "top_p",
  "top_k",
  "max_tokens",
  "stop",
  "logprobs",
  "stream",
  "stream_options",
  "seed",
  "user",
];
const CHAT_FIELDS = new Set([
  ...SHARED_FIELDS,
  "messages",
  "top_logprobs",
  "max_completion_tokens",
]);
const TEXT_FIELDS = new Set([...SHARED_FIELDS, "prompt"]);
const MESSAGE_ROLES = new Set(["system", "developer", "user", "assistant", "tool"]);
const MESSAGE_FIELDS = new Set(["role", "content", "name", "tool_call_id"]);

/**
 * Checks `body` (parsed JSON) as a request of `kind`; throws a 400 {@link badRequest} naming
 * the first field that is unknown, of the wrong type or beyond `limits`.
 *
 * @example
 * ```ts
 * declare const req: Request;
 * const request = parseCompletionRequest("chat", await req.json(), { maxN: 8, maxTokens: 64 });
 * ```
 */
export function parseCompletionRequest(
  kind: "chat" | "text",
  body: unknown,
  limits: RequestLimits,
): CompletionRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw badRequest(
      null,
      `Cannot read the request: expected a JSON object, received ${describe(body)}`,
    );
  }
  const fields = body as Record<string, unknown>;
  const known = kind === "chat" ? CHAT_FIELDS : TEXT_FIELDS;
  for (const key of Object.keys(fields)) {
    if (!known.has(key)) {
      throw badRequest(
        key,
        `Cannot read the request: unknown or unsupported field "${key}"; supported: ${
          [...known].join(", ")
        }`,
        "unknown_parameter",
      );
    }
  }
  const n = integerField(fields, "n", 1, limits.maxN) ?? 1;
  const maxTokens = integerField(fields, "max_completion_tokens", 1, limits.maxTokens) ??
    integerField(fields, "max_tokens", 1, limits.maxTokens) ?? limits.maxTokens;
  const logprobs = kind === "chat"
    ? booleanField(fields, "logprobs") ?? false
    : integerField(fields, "logprobs", 0, MAX_TOP_LOGPROBS) !== undefined;
  const topLogprobs = kind === "chat"
    ? integerField(fields, "top_logprobs", 0, MAX_TOP_LOGPROBS) ?? 0
    : integerField(fields, "logprobs", 0, MAX_TOP_LOGPROBS) ?? 0;
  if (topLogprobs > 0 && !logprobs) {
    throw badRequest("top_logprobs", "Cannot read the request: top_logprobs needs logprobs: true");
  }
  const stream = booleanField(fields, "stream") ?? false;
  return {
    kind,
    model: stringField(fields, "model"),
    messages: kind === "chat" ? parseMessages(fields.messages) : [],
    prompts: kind === "text" ? parsePrompts(fields.prompt) : [],
    n,
    temperature: numberField(fields, "temperature", 0, 2),
    topP: numberField(fields, "top_p", 0, 1, true),
    topK: integerField(fields, "top_k", 0, Number.MAX_SAFE_INTEGER),
    maxTokens,
    stop: parseStop(fields.stop),
    logprobs,
    topLogprobs,
    stream,
    includeUsage: parseStreamOptions(fields.stream_options, stream),
    seed: integerField(fields, "seed", 0, 2 ** 32 - 1),
  };
}

/** `messages`: a non-empty list of `{role, content}` with text content. */
function parseMessages(value: unknown): ChatMessage[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw badRequest(
      "messages",
      `Cannot read "messages": expected a non-empty list, received ${describe(value)}`,
    );
  }
  return value.map((message, i) => {
    const param = `messages[${i}]`;
    if (typeof message !== "object" || message === null || Array.isArray(message)) {
      throw badRequest(
        param,
        `Cannot read "${param}": expected an object, received ${describe(message)}`,
      );
    }
    const m = message as Record<string, unknown>;
    const unknown = Object.keys(m).find((k) => !MESSAGE_FIELDS.has(k));
    if (unknown !== undefined) {
      throw badRequest(
        `${param}.${unknown}`,
        `Cannot read "${param}": unsupported field "${unknown}"; supported: ${
          [...MESSAGE_FIELDS].join(", ")
        }`,
      );
    }
    if (typeof m.role !== "string" || !MESSAGE_ROLES.has(m.role)) {
      throw badRequest(
        `${param}.role`,
        `Cannot read "${param}.role": expected one of ${[...MESSAGE_ROLES].join(", ")}, received ${
          describe(m.role)
        }`,
      );
    }
    return { role: m.role, content: messageText(m.content, `${param}.content`) };
  });
}

/** A message's content: a string, null (an empty assistant turn) or a list of text parts. */
function messageText(content: unknown, param: string): string {
  if (typeof content === "string") return content;
  if (content === null || content === undefined) return "";
  if (Array.isArray(content)) {
    return content.map((part, i) => {
      const p = part as Record<string, unknown> | null;
      if (p?.type !== "text" || typeof p.text !== "string") {
        throw badRequest(
          `${param}[${i}]`,
          `Cannot read "${param}[${i}]": expected a text part {"type": "text", "text": string}, received ${
            describe(part)
          }`,
        );
      }
      return p.text;
    }).join("");
  }
  throw badRequest(
    param,
    `Cannot read "${param}": expected a string or a list of text parts, received ${
      describe(content)
    }`,
  );
}

/** `prompt`: a text, a list of texts, a list of token ids, or a list of such lists. */
function parsePrompts(value: unknown): (string | number[])[] {
  const isIds = (v: unknown): v is number[] =>
    Array.isArray(v) && v.length > 0 && v.every((id) => Number.isInteger(id) && id >= 0);
  if (typeof value === "string") return [value];
  if (isIds(value)) return [value];
  if (
    Array.isArray(value) && value.length > 0 &&
    value.every((p) => typeof p === "string" || isIds(p))
  ) {
    return value as (string | number[])[];
  }
  throw badRequest(
    "prompt",
    `Cannot read "prompt": expected a string, a list of strings, a list of token ids or a list of such lists, received ${
      describe(value)
    }`,
  );
}

/** `stop`: absent, null, a string or up to four strings. */
function parseStop(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  const list = typeof value === "string" ? [value] : value;
  if (
    !Array.isArray(list) || list.length > MAX_STOP ||
    !list.every((s) => typeof s === "string" && s.length > 0)
  ) {
    throw badRequest(
      "stop",
      `Cannot read "stop": expected a non-empty string or up to ${MAX_STOP} of them, received ${
        describe(value)
      }`,
    );
  }
  return list;
}

/** `stream_options.include_usage` (only with `stream: true`). */
function parseStreamOptions(value: unknown, stream: boolean): boolean {
  if (value === undefined || value === null) return false;
  const options = value as Record<string, unknown>;
  const valid = typeof value === "object" && !Array.isArray(value) &&
    Object.keys(options).every((k) => k === "include_usage") &&
    (options.include_usage === undefined || typeof options.include_usage === "boolean");
  if (!valid) {
    throw badRequest(
      "stream_options",
      `Cannot read "stream_options": expected {"include_usage": boolean}, received ${
        describe(value)
      }`,
    );
  }
  if (!stream) {
    throw badRequest(
      "stream_options",
      'Cannot read "stream_options": it is only allowed with "stream": true',
    );
  }
  return options.include_usage === true;
}

function stringField(fields: Record<string, unknown>, key: string): string | undefined {
  const value = fields[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") {
    throw badRequest(key, `Cannot read "${key}": expected a string, received ${describe(value)}`);
  }
  return value;
}

function booleanField(fields: Record<string, unknown>, key: string): boolean | undefined {
  const value = fields[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") {
    throw badRequest(
      key,
      `Cannot read "${key}": expected true or false, received ${describe(value)}`,
    );
  }
  return value;
}

/** A number in [min, max] (`aboveMin`: min excluded); absent or null: undefined. */
function numberField(
  fields: Record<string, unknown>,
  key: string,
  min: number,
  max: number,
  aboveMin = false,
): number | undefined {
  const value = fields[key];
  if (value === undefined || value === null) return undefined;
  const low = aboveMin ? value as number > min : value as number >= min;
  if (typeof value !== "number" || !Number.isFinite(value) || !low || value > max) {
    const range = `${aboveMin ? "(" : "["}${min}, ${max}]`;
    throw badRequest(
      key,
      `Cannot read "${key}": expected a number in ${range}, received ${describe(value)}`,
    );
  }
  return value;
}

/** An integer in [min, max]; absent or null: undefined. */
function integerField(
  fields: Record<string, unknown>,
  key: string,
  min: number,
  max: number,
): number | undefined {
  const value = fields[key];
  if (value === undefined || value === null) return undefined;
  if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) {
    throw badRequest(
      key,
      `Cannot read "${key}": expected an integer in [${min}, ${max}], received ${describe(value)}`,
      (value as number) > max ? "limit_exceeded" : undefined,
    );
  }
  return value as number;
}

/** A short rendering of a received value for messages. */
function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
