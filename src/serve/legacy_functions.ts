/**
 * OpenAI's deprecated function calling, still sent by older agent frameworks (AutoGen 0.2,
 * LangChain's `bind_functions`, LlamaIndex's function agents): `functions` and `function_call`
 * in the request, assistant messages with `function_call`, results as role `function`, and a
 * reply with `message.function_call` and `finish_reason: "function_call"`. Read as the tools
 * API it predates (one call per reply), so decoding, parsing and recording are the tools path's;
 * only the request's and the reply's shapes differ.
 */

import type { ChatMessage, ToolCall, ToolDefinition } from "../model/chat_template.ts";
import { badRequest } from "./api_error.ts";
import * as field from "./request_fields.ts";
import {
  distinctNames,
  listAt,
  parseFunction,
  parseToolChoice,
  type ToolChoice,
} from "./tool_request.ts";

/** `functions` as the tools they were (absent: none). */
export function legacyTools(value: unknown): ToolDefinition[] {
  return distinctNames(
    listAt(value, "functions").map((fn, i) => parseFunction(fn, `functions[${i}]`)),
    "functions",
  );
}

/**
 * The tools and tool choice of a request's `functions` and `function_call` (`none`, `auto` or
 * `{"name": ...}`), or undefined when it sends neither; throws a 400 naming the legacy field.
 */
export function legacyToolUse(
  fields: field.Fields,
): { tools: ToolDefinition[]; toolChoice: ToolChoice } | undefined {
  const { functions, function_call: choice } = fields;
  if ((functions ?? null) === null && (choice ?? null) === null) return undefined;
  if (!(fields.tools === undefined || fields.tools === null)) {
    throw badRequest("functions", 'Cannot read "functions": send either "tools" or "functions"');
  }
  const tools = legacyTools(functions);
  if (choice === undefined || choice === null || choice === "none" || choice === "auto") {
    return { tools, toolChoice: parseToolChoice(choice, tools) };
  }
  const name = field.isObject(choice) ? choice.name : undefined;
  if (typeof name !== "string" || !tools.some((t) => t.function.name === name)) {
    throw badRequest(
      "function_call",
      `Cannot read "function_call": expected "none", "auto" or {"name": ...} naming one of "functions", received ${
        field.describe(choice)
      }`,
    );
  }
  return { tools, toolChoice: { mode: "required", allowed: [name], single: true } };
}

/** The id given to the call of legacy assistant message `index` (results refer to it). */
export function legacyCallId(index: number): string {
  return `call_legacy_${index}`;
}

/**
 * Gives each `function` result (read as a tool message without an id) the id of the latest
 * legacy call before it; throws when a result answers no call.
 */
export function linkLegacyResults(messages: ChatMessage[]): void {
  let latest: string | undefined;
  messages.forEach((message, i) => {
    const legacy = message.tool_calls?.find((c) => c.id?.startsWith("call_legacy_"));
    if (legacy) latest = legacy.id;
    if (message.role === "tool" && message.tool_call_id === undefined) {
      if (latest === undefined) {
        throw badRequest(
          `messages[${i}]`,
          `Cannot read "messages[${i}]": a "function" message answers no assistant function_call before it`,
        );
      }
      message.tool_call_id = latest;
    }
  });
}

/** A reply's first tool call as `function_call` (the legacy API returns one). */
export function legacyFunctionCall(calls: readonly ToolCall[]): Record<string, unknown> {
  if (calls.length === 0) return {};
  const { name, arguments: args } = calls[0].function;
  return { function_call: { name, arguments: args } };
}
