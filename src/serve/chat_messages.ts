/**
 * Reads the `messages` of a chat completion request into {@link ChatMessage}s, field by field
 * as the OpenAI API defines them per role: text or text parts as content (`null` for an
 * assistant turn with tool calls), assistant `tool_calls` (arguments JSON text of an object),
 * tool results with their `tool_call_id`, `developer` read as `system`, the deprecated
 * `function_call` and role `function` read as the tool call and tool result they were. Fields a
 * text model cannot honour (images, audio) are a 400 naming them; fields that change nothing
 * (`refusal`, `annotations`) are accepted.
 */

import { argumentsObject, type ChatMessage, type ToolCall } from "../model/chat_template.ts";
import { badRequest } from "./api_error.ts";
import { legacyCallId, linkLegacyResults } from "./legacy_functions.ts";
import {
  describe,
  type Fields,
  isObject,
  objectAt,
  onlyKnown,
  stringField,
} from "./request_fields.ts";

/** Fields each role may carry. */
const ROLE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  system: ["role", "content", "name"],
  developer: ["role", "content", "name"],
  user: ["role", "content", "name"],
  assistant: [
    "role",
    "content",
    "name",
    "tool_calls",
    "refusal",
    "annotations",
    "audio",
    "function_call",
    "reasoning_content",
    "reasoning",
  ],
  tool: ["role", "content", "tool_call_id", "name"],
  function: ["role", "content", "name"],
};

/**
 * `messages`: a non-empty list of messages; throws a 400 naming the first bad field
 * (`messages[i].field`).
 */
export function parseMessages(value: unknown): ChatMessage[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw badRequest(
      "messages",
      `Cannot read "messages": expected a non-empty list, received ${describe(value)}`,
    );
  }
  const messages = value.map((message, i) => parseMessage(message, i));
  linkLegacyResults(messages);
  return messages;
}

function parseMessage(value: unknown, index: number): ChatMessage {
  const param = `messages[${index}]`;
  const m = objectAt(value, param);
  const role = m.role;
  if (typeof role !== "string" || !(role in ROLE_FIELDS)) {
    throw badRequest(
      `${param}.role`,
      `Cannot read "${param}.role": expected one of ${
        Object.keys(ROLE_FIELDS).join(", ")
      }, received ${describe(role)}`,
    );
  }
  onlyKnown(m, ROLE_FIELDS[role], param);
  const message: ChatMessage = {
    role: role === "developer" ? "system" : role === "function" ? "tool" : role,
    content: contentText(m.content, `${param}.content`, role),
  };
  const name = stringField(m, "name", `${param}.name`);
  if (name !== undefined) message.name = name;
  if (role === "assistant") readAssistant(m, index, message);
  if (role === "function" && name === undefined) {
    throw badRequest(`${param}.name`, `Cannot read "${param}": a function message needs "name"`);
  }
  if (role === "tool") {
    const id = stringField(m, "tool_call_id", `${param}.tool_call_id`);
    if (id === undefined) {
      throw badRequest(
        `${param}.tool_call_id`,
        `Cannot read "${param}": a tool message needs "tool_call_id"`,
      );
    }
    message.tool_call_id = id;
  }
  return message;
}

/** The assistant-only fields: tool calls (or a legacy function call), reasoning; audio refused. */
function readAssistant(m: Fields, index: number, message: ChatMessage): void {
  const param = `messages[${index}]`;
  if (m.audio !== undefined && m.audio !== null) {
    throw badRequest(
      `${param}.audio`,
      `Cannot read "${param}.audio": audio replies are not supported by a text model`,
    );
  }
  const reasoning = stringField(m, "reasoning_content", `${param}.reasoning_content`) ??
    stringField(m, "reasoning", `${param}.reasoning`);
  if (reasoning !== undefined) message.reasoning_content = reasoning;
  if (m.function_call !== undefined && m.function_call !== null) {
    const call = parseToolCall(
      { type: "function", function: m.function_call },
      `${param}.function_call`,
    );
    message.tool_calls = [{ ...call, id: legacyCallId(index) }];
    return;
  }
  if (m.tool_calls === undefined || m.tool_calls === null) return;
  if (!Array.isArray(m.tool_calls)) {
    throw badRequest(
      `${param}.tool_calls`,
      `Cannot read "${param}.tool_calls": expected a list, received ${describe(m.tool_calls)}`,
    );
  }
  const calls = m.tool_calls.map((call, j) => parseToolCall(call, `${param}.tool_calls[${j}]`));
  if (calls.length > 0) message.tool_calls = calls;
}

function parseToolCall(value: unknown, param: string): ToolCall {
  const call = objectAt(value, param);
  onlyKnown(call, ["id", "type", "function", "index"], param); // index: left by stream readers
  if (call.type !== undefined && call.type !== "function") {
    throw badRequest(
      `${param}.type`,
      `Cannot read "${param}.type": expected "function", received ${describe(call.type)}`,
    );
  }
  const fn = objectAt(call.function, `${param}.function`);
  onlyKnown(fn, ["name", "arguments"], `${param}.function`);
  const name = stringField(fn, "name", `${param}.function.name`);
  if (!name) {
    throw badRequest(`${param}.function.name`, `Cannot read "${param}.function": expected a name`);
  }
  const args = fn.arguments ?? "{}";
  try {
    argumentsObject(args, param);
  } catch (err) {
    throw badRequest(`${param}.function.arguments`, (err as Error).message);
  }
  const id = stringField(call, "id", `${param}.id`);
  return {
    ...(id === undefined ? {} : { id }),
    type: "function",
    function: { name, arguments: args as string },
  };
}

/**
 * A message content as text: a string, null / absent (an assistant turn with tool calls), or a
 * list of text parts (and, for assistant turns, refusal parts); other parts are a 400.
 */
function contentText(content: unknown, param: string, role: string): string {
  if (typeof content === "string") return content;
  if (content === null || content === undefined) {
    if (role === "assistant") return "";
    throw badRequest(param, `Cannot read "${param}": a ${role} message needs content`);
  }
  if (!Array.isArray(content)) {
    throw badRequest(
      param,
      `Cannot read "${param}": expected a string or a list of text parts, received ${
        describe(content)
      }`,
    );
  }
  return content.map((part, i) => {
    const p = isObject(part) ? part : {};
    if (p.type === "text" && typeof p.text === "string") return p.text;
    if (role === "assistant" && p.type === "refusal" && typeof p.refusal === "string") {
      return p.refusal;
    }
    const kind = typeof p.type === "string" ? `a "${p.type}" part` : describe(part);
    throw badRequest(
      `${param}[${i}]`,
      `Cannot read "${param}[${i}]": this server serves a text model; expected a text part {"type": "text", "text": string}, received ${kind}`,
    );
  }).join("");
}
