/**
 * The `llama3_json` tool-call parser (vLLM's name): Llama 3.1 / 3.2 / 3.3 answer a call as a
 * reply that is only JSON, `{"name": ..., "parameters": {...}}` (or `"arguments"`), optionally
 * after `<|python_tag|>`, several separated by `;`. A reply that starts like a call but is not
 * wholly calls stays text and counts as one malformed call; any other reply is text.
 */

import { alt, literal, optional, repeat, seq } from "../constrained/grammar.ts";
import {
  asToolCall,
  callObjectGrammar,
  type ParsedReply,
  type ParsedToolCall,
  type ToolCallParser,
} from "./tool_call_parser.ts";

const PYTHON_TAG = "<|python_tag|>";

/** The index just past the JSON object or array starting at `start`, or -1. */
export function jsonValueEnd(text: string, start: number): number {
  if (text[start] !== "{" && text[start] !== "[") return -1;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** The calls of `body` (`;`-separated call objects), or undefined when it is not only calls. */
function readCalls(body: string): ParsedToolCall[] | undefined {
  const calls: ParsedToolCall[] = [];
  let at = 0;
  while (true) {
    while (/\s/.test(body[at] ?? "")) at++;
    const end = jsonValueEnd(body, at);
    if (end < 0) return undefined;
    let call: ParsedToolCall | undefined;
    try {
      call = asToolCall(JSON.parse(body.slice(at, end)));
    } catch {
      return undefined;
    }
    if (!call) return undefined;
    calls.push(call);
    at = end;
    while (/\s/.test(body[at] ?? "")) at++;
    if (at === body.length) return calls;
    if (body[at] !== ";") return undefined;
    at++;
  }
}

/** See the file comment. */
export const llama3JsonParser: ToolCallParser = {
  description: 'Llama 3.x: {"name": ..., "parameters": ...} replies, ";"-separated',
  recognizes: (template) =>
    template.includes(PYTHON_TAG) || template.includes('"parameters": dictionary of argument name'),
  parse(text: string): ParsedReply {
    const trimmed = text.trim();
    const body = trimmed.startsWith(PYTHON_TAG) ? trimmed.slice(PYTHON_TAG.length) : trimmed;
    if (!trimmed.startsWith(PYTHON_TAG) && !body.startsWith("{")) {
      return { content: trimmed, calls: [], malformed: 0 };
    }
    const calls = readCalls(body);
    return calls
      ? { content: "", calls, malformed: 0 }
      : { content: trimmed, calls: [], malformed: 1 };
  },
  callsGrammar(tools, parallel) {
    const call = alt(...tools.map((tool) => callObjectGrammar(tool, "parameters")));
    const separator = seq(literal(";"), optional(literal(" ")));
    return repeat(call, { min: 1, max: parallel ? Infinity : 1, separator });
  },
};
