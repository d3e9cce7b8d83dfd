/**
 * Reads the JSON body of `POST /v1/chat/completions` and `POST /v1/completions` into one
 * checked {@link CompletionRequest}: every field typed and within the server's limits, so a bad
 * request is a 400 naming the field before any model work. Every field the OpenAI API defines
 * is decided here: implemented, accepted and ignored because it changes nothing rft computes
 * (as vLLM does: `metadata`, `store`, `service_tier`, `user`, ...), read as what replaced it
 * (the deprecated `functions` / `function_call`: `legacy_functions.ts`), or refused with a
 * reason (audio, web search); fields outside the API (and vLLM's few
 * extensions: `top_k`, `chat_template_kwargs`, `return_token_ids`) are a 400. Does not tokenize
 * (the prompt length is checked where the prompt is encoded) and does not sample.
 */

import type { ChatMessage, ToolDefinition } from "../model/chat_template.ts";
import { badRequest } from "./api_error.ts";
import { legacyToolUse } from "./legacy_functions.ts";
import { parseMessages } from "./chat_messages.ts";
import {
  booleanField,
  choiceField,
  describe,
  type Fields,
  integerField,
  isObject,
  numberField,
  objectAt,
  stringField,
} from "./request_fields.ts";
import {
  parseResponseFormat,
  parseToolChoice,
  parseTools,
  type ResponseFormat,
  type ToolChoice,
} from "./tool_request.ts";

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
  /** OpenAI's penalties (0: off) and logit bias by token id. */
  frequencyPenalty: number;
  presencePenalty: number;
  logitBias: Record<number, number>;
  /** Chat: the tools offered (none: []) and how the model may use them. */
  tools: ToolDefinition[];
  toolChoice: ToolChoice;
  /** Chat: more than one tool call per reply allowed. */
  parallelToolCalls: boolean;
  /** Chat: tools came as the deprecated `functions`; the reply is a `function_call`. */
  legacyFunctions: boolean;
  /** Chat: the reply's required shape. */
  responseFormat: ResponseFormat;
  /** Chat: extra chat-template variables (`chat_template_kwargs`, `reasoning_effort`). */
  templateVariables: Record<string, unknown>;
  /** Text completions: samples drawn per prompt, the `n` most likely returned (`best_of`). */
  bestOf: number;
  /** Text completions: each choice starts with its prompt (`echo`). */
  echo: boolean;
  /** Return the prompt's and each choice's token ids (vLLM's `return_token_ids`). */
  returnTokenIds: boolean;
}

/** Most alternatives per token a request may ask for (OpenAI's limit). */
export const MAX_TOP_LOGPROBS = 20;

/** Most stop texts per request (OpenAI's limit). */
const MAX_STOP = 4;

/** Most entries of `logit_bias` (OpenAI's limit). */
const MAX_LOGIT_BIAS = 300;

/** Fields rft implements, both endpoints (`top_k`, `return_token_ids`: vLLM's). */
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
  "frequency_penalty",
  "presence_penalty",
  "logit_bias",
  "return_token_ids",
];

/**
 * OpenAI fields that change nothing rft computes, accepted and ignored as vLLM does: request
 * bookkeeping (`metadata`, `store`, `user`, `safety_identifier`), serving hints (`service_tier`,
 * prompt caching, `prediction`, which speeds up but never changes a reply) and `verbosity`, a
 * hint a model without such training cannot follow.
 */
const IGNORED_FIELDS = [
  "metadata",
  "store",
  "service_tier",
  "user",
  "safety_identifier",
  "prompt_cache_key",
  "prompt_cache_retention",
  "prompt_cache_options",
  "prediction",
  "verbosity",
];

/** Chat fields beyond the shared ones (`chat_template_kwargs`: vLLM's). */
const CHAT_FIELDS = [
  "messages",
  "top_logprobs",
  "max_completion_tokens",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "response_format",
  "reasoning_effort",
  "chat_template_kwargs",
  "modalities",
  "audio",
  "web_search_options",
  "functions",
  "function_call",
];

/** Text-completion fields beyond the shared ones. */
const TEXT_FIELDS = ["prompt", "best_of", "echo", "suffix"];

const KNOWN: Record<"chat" | "text", ReadonlySet<string>> = {
  chat: new Set([...SHARED_FIELDS, ...IGNORED_FIELDS, ...CHAT_FIELDS]),
  text: new Set([...SHARED_FIELDS, ...IGNORED_FIELDS, ...TEXT_FIELDS]),
};

/**
 * OpenAI fields rft cannot honour, refused with a reason unless absent or at a value that asks
 * for nothing (`isNoOp`).
 */
const REFUSED: Record<string, { isNoOp: (v: unknown) => boolean; why: string }> = {
  audio: { isNoOp: (v) => v === null, why: "audio replies need an audio model" },
  modalities: {
    isNoOp: (v) => Array.isArray(v) && v.every((m) => m === "text"),
    why: 'this server replies with text only (["text"])',
  },
  web_search_options: { isNoOp: (v) => v === null, why: "this server has no web search" },
  suffix: { isNoOp: (v) => v === null || v === "", why: "insertion (a suffix) is not supported" },
};

/** Values of `reasoning_effort` (passed to the chat template as `reasoning_effort`). */
const REASONING_EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh"] as const;

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
  const fields = body as Fields;
  checkFieldNames(kind, fields);
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
  const legacy = kind === "chat" ? legacyToolUse(fields) : undefined;
  const tools = legacy?.tools ?? (kind === "chat" ? parseTools(fields.tools) : []);
  const bestOf = integerField(fields, "best_of", n, limits.maxN) ?? n;
  if (bestOf > n && stream) {
    throw badRequest("best_of", 'Cannot read "best_of": it cannot be used with "stream": true');
  }
  return {
    kind,
    model: stringField(fields, "model"),
    messages: kind === "chat" ? parseMessages(fields.messages) : [],
    prompts: kind === "text" ? parsePrompts(fields.prompt) : [],
    n,
    temperature: numberField(fields, "temperature", 0, 2),
    ...nucleus(fields),
    maxTokens,
    stop: parseStop(fields.stop),
    logprobs,
    topLogprobs,
    stream,
    includeUsage: parseStreamOptions(fields.stream_options, stream),
    seed: parseSeed(fields),
    frequencyPenalty: numberField(fields, "frequency_penalty", -2, 2) ?? 0,
    presencePenalty: numberField(fields, "presence_penalty", -2, 2) ?? 0,
    logitBias: parseLogitBias(fields.logit_bias),
    tools,
    toolChoice: legacy?.toolChoice ?? parseToolChoice(fields.tool_choice, tools),
    parallelToolCalls: legacy === undefined &&
      (booleanField(fields, "parallel_tool_calls") ?? true),
    legacyFunctions: legacy !== undefined,
    responseFormat: parseResponseFormat(fields.response_format),
    templateVariables: parseTemplateVariables(fields),
    bestOf,
    echo: kind === "text" && (booleanField(fields, "echo") ?? false),
    returnTokenIds: booleanField(fields, "return_token_ids") ?? false,
  };
}

/** Throws on a field outside the API, or one of {@link REFUSED} asking for something. */
function checkFieldNames(kind: "chat" | "text", fields: Fields): void {
  for (const [key, value] of Object.entries(fields)) {
    if (!KNOWN[kind].has(key)) {
      throw badRequest(
        key,
        `Cannot read the request: unknown field "${key}"; the ${
          kind === "chat" ? "chat completions" : "completions"
        } API has: ${[...KNOWN[kind]].join(", ")}`,
        "unknown_parameter",
      );
    }
    const refused = REFUSED[key];
    if (refused && !refused.isNoOp(value)) {
      throw badRequest(
        key,
        `Cannot serve "${key}": ${refused.why} (received ${describe(value)})`,
        "unsupported_parameter",
      );
    }
  }
}

/** `logit_bias`: token ids (as JSON keys) to biases in [-100, 100]. */
function parseLogitBias(value: unknown): Record<number, number> {
  if (value === undefined || value === null) return {};
  const entries = Object.entries(objectAt(value, "logit_bias"));
  if (entries.length > MAX_LOGIT_BIAS) {
    throw badRequest("logit_bias", `Cannot read "logit_bias": at most ${MAX_LOGIT_BIAS} entries`);
  }
  const bias: Record<number, number> = {};
  for (const [key, v] of entries) {
    const id = Number(key);
    if (!/^\d+$/.test(key) || typeof v !== "number" || !(v >= -100 && v <= 100)) {
      throw badRequest(
        "logit_bias",
        `Cannot read "logit_bias": expected token ids mapped to numbers in [-100, 100], received ${
          describe({ [key]: v })
        }`,
      );
    }
    bias[id] = v;
  }
  return bias;
}

/** The chat template's extra variables: `chat_template_kwargs`, then `reasoning_effort`. */
function parseTemplateVariables(fields: Fields): Record<string, unknown> {
  const kwargs = fields.chat_template_kwargs;
  const variables: Record<string, unknown> = kwargs === undefined || kwargs === null
    ? {}
    : { ...objectAt(kwargs, "chat_template_kwargs") };
  const effort = choiceField(fields, "reasoning_effort", REASONING_EFFORTS);
  if (effort !== undefined) variables.reasoning_effort = effort;
  return variables;
}

/**
 * `top_p` in [0, 1] as OpenAI takes it (0, which the sampler's "fewest tokens reaching top_p"
 * would leave undefined, keeps the most likely token: top_k 1) and vLLM's `top_k`.
 */
function nucleus(fields: Fields): Pick<CompletionRequest, "topP" | "topK"> {
  const topP = numberField(fields, "top_p", 0, 1);
  const topK = integerField(fields, "top_k", 0, Number.MAX_SAFE_INTEGER);
  return topP === 0 ? { topK: 1 } : { topP, topK };
}

/**
 * `seed`: any 64-bit integer, as vLLM takes it (clients send -1 or large random seeds), folded
 * into the 32 bits the sampler's streams use.
 */
function parseSeed(fields: Fields): number | undefined {
  const seed = integerField(fields, "seed", -(2 ** 63), 2 ** 63);
  return seed === undefined ? undefined : ((seed % 2 ** 32) + 2 ** 32) % 2 ** 32;
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
  const flags = ["include_usage", "include_obfuscation"]; // obfuscation: rft adds none
  const valid = isObject(value) &&
    Object.entries(options).every(([k, v]) =>
      flags.includes(k) && (v === undefined || typeof v === "boolean")
    );
  if (!valid) {
    throw badRequest(
      "stream_options",
      `Cannot read "stream_options": expected {"include_usage": boolean, "include_obfuscation": boolean}, received ${
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
