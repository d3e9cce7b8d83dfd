/**
 * The contract of a tool-call parser (vLLM's `--tool-call-parser`): it reads the tool calls a
 * model wrote in its reply, in the format its chat template teaches, and gives the grammar of a
 * reply made only of such calls (for `tool_choice: "required"` or a named function, decoded
 * under that grammar). Also the shapes shared by the parsers and the call ids the API hands out.
 */

import { type Grammar, literal, seq } from "../constrained/grammar.ts";
import {
  anyJsonObject,
  colon,
  comma,
  jsonSchemaGrammar,
} from "../constrained/json_schema_grammar.ts";
import type { ToolDefinition } from "../model/chat_template.ts";

/** One call read from a reply. */
export interface ParsedToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

/** A reply split into its text and its tool calls. */
export interface ParsedReply {
  /** The reply without the calls read (malformed call blocks stay in it), trimmed. */
  content: string;
  calls: ParsedToolCall[];
  /** Call blocks that could not be read as calls (their text is left in `content`). */
  malformed: number;
}

/** Reads and constrains tool calls in one model family's format. */
export interface ToolCallParser {
  /** One line for listings. */
  readonly description: string;
  /** Whether a chat template (its source) writes tool calls in this format. */
  recognizes(template: string): boolean;
  /** Splits a reply into text and calls; never throws on model output. */
  parse(text: string): ParsedReply;
  /**
   * The grammar of a reply that is only calls of `tools` (each call's arguments per the tool's
   * JSON schema): one call, or with `parallel` one or more.
   */
  callsGrammar(tools: readonly ToolDefinition[], parallel: boolean): Grammar;
}

const ID_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A fresh call id as OpenAI writes them: `call_` and 24 letters or digits. */
export function toolCallId(): string {
  const random = crypto.getRandomValues(new Uint8Array(24));
  return `call_${Array.from(random, (b) => ID_CHARS[b % ID_CHARS.length]).join("")}`;
}

/**
 * `value` as a call (`{"name": string, "arguments" or "parameters": object or JSON of one}`), or
 * undefined when it is not one.
 */
export function asToolCall(value: unknown): ParsedToolCall | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const { name, arguments: args = (value as { parameters?: unknown }).parameters } = value as {
    name?: unknown;
    arguments?: unknown;
  };
  if (typeof name !== "string" || name === "") return undefined;
  let parsed = args ?? {};
  if (typeof parsed === "string") {
    try {
      parsed = JSON.parse(parsed);
    } catch {
      return undefined;
    }
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined;
  return { name, arguments: parsed as Record<string, unknown> };
}

/** The calls of a parsed JSON block: one call or a list of calls (undefined: not calls). */
export function asToolCalls(value: unknown): ParsedToolCall[] | undefined {
  const list = Array.isArray(value) ? value : [value];
  const calls = list.map(asToolCall);
  return list.length > 0 && calls.every((c) => c !== undefined)
    ? calls as ParsedToolCall[]
    : undefined;
}

/**
 * The grammar of one call object `{"name": "<tool>", "<argumentsKey>": <arguments>}`, name and
 * arguments in that order, the arguments per the tool's schema (absent: any object).
 */
export function callObjectGrammar(tool: ToolDefinition, argumentsKey: string): Grammar {
  const { name, parameters } = tool.function;
  return seq(
    literal('{"name"'),
    colon(),
    literal(JSON.stringify(name)),
    comma(),
    literal(JSON.stringify(argumentsKey)),
    colon(),
    parameters ? jsonSchemaGrammar(parameters) : anyJsonObject(),
    literal("}"),
  );
}
