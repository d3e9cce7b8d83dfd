/**
 * What a chat request asks of the model's replies, and how replies are read back. Structured
 * output is constrained decoding, not a checked retry: `tool_choice: "required"` or a named
 * function decode under the grammar of the model's own tool-call format (its parser's), and
 * `response_format` `json_object` / `json_schema` under the grammar of any JSON object / the
 * schema (with `tool_choice: "auto"`, either a call or that JSON). What a grammar cannot say
 * (`minimum`, `pattern`, ...) is checked on the finished reply: a violation is a 500 naming it,
 * never a silent pass. `auto` replies are read by the model's tool-call parser; calls that
 * cannot be read, or that name a tool not offered, or break a `strict` tool's schema, stay text
 * and are counted as malformed.
 */

import { alt } from "../constrained/grammar.ts";
import { jsonSchemaProblems } from "../constrained/json_schema_check.ts";
import {
  anyJsonObject,
  type JsonSchema,
  jsonSchemaGrammar,
} from "../constrained/json_schema_grammar.ts";
import { TokenGrammar, TokenVocabulary } from "../constrained/token_constraint.ts";
import type { ToolDefinition } from "../model/chat_template.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import type { NamedToolCallParser, ParsedToolCall } from "../tool_calls/mod.ts";
import { ApiError, badRequest } from "./api_error.ts";
import type { CompletionRequest } from "./completion_request.ts";

/** How one chat request's replies are decoded and read. */
export interface OutputPlan {
  /** The grammar every sample is decoded under (absent: free text). */
  grammar?: TokenGrammar;
  /** Reads tool calls from replies (absent: replies are text). */
  parser?: NamedToolCallParser;
  /** The tools replies may call. */
  tools: readonly ToolDefinition[];
  /** At most one call per reply is returned (`parallel_tool_calls: false`). */
  single: boolean;
  /** Replies without calls must be JSON objects, satisfying `schema` when given. */
  json?: { schema?: JsonSchema; name: string };
}

/** A reply as the API returns it. */
export interface ReadReply {
  /** Text outside the calls read (null when there are calls and no text). */
  content: string | null;
  calls: ParsedToolCall[];
  /** Call blocks left as text: unreadable, naming a tool not offered, or breaking a strict schema. */
  malformed: number;
}

/** Builds the grammars of a served model, keeping each by request shape (masks are costly). */
export class OutputPlanner {
  readonly #grammars = new Map<string, TokenGrammar>();

  /**
   * `parser`: the model's tool-call parser (absent: tool use other than `none` is refused);
   * `endTokens`: the tokens that end a sample; `autoToolChoice` false refuses `auto` tool use,
   * as vLLM does without `--enable-auto-tool-choice`.
   */
  constructor(
    readonly tokenizer: Tokenizer,
    readonly parser: NamedToolCallParser | undefined,
    readonly endTokens: readonly number[],
    readonly autoToolChoice = true,
  ) {}

  /** The plan of `request` (chat); throws a 400 when it asks what the model cannot do. */
  plan(request: CompletionRequest): OutputPlan {
    const { toolChoice, responseFormat } = request;
    const offered = toolChoice.allowed
      ? request.tools.filter((t) => toolChoice.allowed!.includes(t.function.name))
      : request.tools;
    const single = toolChoice.single || !request.parallelToolCalls;
    const json = responseFormat.type === "json_object"
      ? { name: "json_object" }
      : responseFormat.type === "json_schema"
      ? { schema: responseFormat.schema, name: responseFormat.name }
      : undefined;
    const format = "response_format.json_schema.schema";
    const content = json &&
      readingSchemas(format, () => json.schema ? jsonSchemaGrammar(json.schema) : anyJsonObject());
    if (toolChoice.mode === "none" || offered.length === 0) {
      return {
        tools: [],
        single,
        json,
        grammar: content && this.#grammar(content, { json }, format),
      };
    }
    const parser = this.parser ?? refuse(toolChoice.mode);
    if (toolChoice.mode === "auto") {
      if (!this.autoToolChoice) {
        throw badRequest(
          "tool_choice",
          'Cannot serve tool_choice "auto": explorer.rollout_model.enable_auto_tool_choice is false',
        );
      }
      const grammar = content &&
        this.#grammar(
          alt(readingSchemas("tools", () => parser.parser.callsGrammar(offered, !single)), content),
          { json, offered, single },
          `tools or ${format}`,
        );
      return { tools: offered, single, json, parser, grammar };
    }
    const calls = readingSchemas("tools", () => parser.parser.callsGrammar(offered, !single));
    return {
      tools: offered,
      single,
      parser,
      grammar: this.#grammar(calls, { offered, single }, "tools"),
    };
  }

  /** `grammar` compiled over the vocabulary (`param`: where its schemas come from, for errors). */
  #grammar(grammar: Parameters<typeof alt>[0], shape: unknown, param: string): TokenGrammar {
    const key = JSON.stringify(shape);
    let compiled = this.#grammars.get(key);
    if (!compiled) {
      compiled = readingSchemas(
        param,
        () => new TokenGrammar(grammar, TokenVocabulary.of(this.tokenizer), this.endTokens),
      );
      if (this.#grammars.size >= MAX_GRAMMARS) {
        this.#grammars.delete(this.#grammars.keys().next().value!);
      }
      this.#grammars.set(key, compiled);
    }
    return compiled;
  }
}

/**
 * `build()`, with a JSON schema it cannot read (a `$ref` that does not resolve, a schema that is
 * not an object) turned into a 400 naming `param`.
 */
function readingSchemas<T>(param: string, build: () => T): T {
  try {
    return build();
  } catch (err) {
    const message = (err as Error)?.message ?? "";
    if (!message.startsWith("Cannot read the JSON schema")) throw err;
    throw badRequest(param, `Cannot read "${param}": ${message}`);
  }
}

/** Grammars (with their masks) a planner keeps. */
const MAX_GRAMMARS = 16;

function refuse(mode: string): never {
  throw badRequest(
    "tool_choice",
    `Cannot serve tool_choice "${mode}": this model has no tool-call parser (its chat template writes no known tool-call format); start rft serve with --tool-call-parser NAME or set explorer.rollout_model.tool_call_parser`,
  );
}

/**
 * Reads a reply `text` under `plan`: its tool calls (when the plan has a parser) and content;
 * throws a 500 when content that must be JSON is not, or breaks the schema (unless the reply
 * was cut at the length limit, which `finish_reason: "length"` tells the client).
 */
export function readReply(plan: OutputPlan, text: string, truncated: boolean): ReadReply {
  let reply: ReadReply = { content: text, calls: [], malformed: 0 };
  if (plan.parser) {
    const parsed = plan.parser.parser.parse(text);
    const fits = (call: ParsedToolCall) => callFits(call, plan.tools);
    const bad = parsed.calls.filter((c) => !fits(c));
    const good = parsed.calls.filter(fits);
    const calls = plan.single ? good.slice(0, 1) : good;
    reply = {
      content: [parsed.content, ...bad.map(callText)].filter((t) => t !== "").join("\n") || null,
      calls,
      malformed: parsed.malformed + bad.length,
    };
    if (calls.length === 0) reply.content = reply.content ?? "";
  }
  if (plan.json && reply.calls.length === 0 && !truncated) {
    checkJson(reply.content ?? "", plan.json);
  }
  return reply;
}

/** Whether `call` names an offered tool and, for a strict tool, satisfies its schema. */
function callFits(call: ParsedToolCall, tools: readonly ToolDefinition[]): boolean {
  const tool = tools.find((t) => t.function.name === call.name);
  if (!tool) return false;
  const { strict, parameters } = tool.function;
  return !strict || !parameters || jsonSchemaProblems(call.arguments, parameters).length === 0;
}

/** A call as text, for a call that stays content. */
function callText(call: ParsedToolCall): string {
  return JSON.stringify({ name: call.name, arguments: call.arguments });
}

function checkJson(content: string, json: { schema?: JsonSchema; name: string }): void {
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    throw invalidOutput(`the reply is not JSON: ${JSON.stringify(content.slice(0, 80))}`);
  }
  const isObject = typeof value === "object" && value !== null && !Array.isArray(value);
  if (!json.schema && !isObject) throw invalidOutput("the reply is not a JSON object");
  const problems = json.schema ? jsonSchemaProblems(value, json.schema) : [];
  if (problems.length > 0) {
    throw invalidOutput(`the reply breaks schema "${json.name}": ${problems.join("; ")}`);
  }
}

function invalidOutput(detail: string): ApiError {
  return new ApiError(
    500,
    `Cannot serve the request: ${detail} (a constraint the grammar cannot express; retry samples anew)`,
    "server_error",
    "response_format",
    "invalid_structured_output",
  );
}
