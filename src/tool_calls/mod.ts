/**
 * The tool-call parser registry (vLLM's `--tool-call-parser` names) with the built-ins
 * registered here; plugins add theirs with `TOOL_CALL_PARSERS.register(name, parser)`. Also
 * how a served model's parser is chosen: the configured name, else the parser whose format the
 * model's chat template writes.
 */

import { Registry } from "../util/registry.ts";
import { hermesParser } from "./hermes.ts";
import { llama3JsonParser } from "./llama3_json.ts";
import type { ToolCallParser } from "./tool_call_parser.ts";

export {
  asToolCall,
  asToolCalls,
  callObjectGrammar,
  type ParsedReply,
  type ParsedToolCall,
  toolCallId,
  type ToolCallParser,
} from "./tool_call_parser.ts";

/** Tool-call parsers by name: `hermes`, `llama3_json`. */
export const TOOL_CALL_PARSERS: Registry<ToolCallParser> = new Registry<ToolCallParser>(
  "tool call parser",
  [
    ["hermes", hermesParser],
    ["llama3_json", llama3JsonParser],
  ],
);

/** A parser with its registry name. */
export interface NamedToolCallParser {
  name: string;
  parser: ToolCallParser;
}

/**
 * The parser of a served model: `name` when given (throws listing the known names on an unknown
 * one), else the first registered parser, by name, that recognizes `template`; undefined when
 * none does (the model's replies are then never read as calls).
 */
export function chooseToolCallParser(
  name: string | undefined,
  template: string | undefined,
): NamedToolCallParser | undefined {
  if (name !== undefined) return { name, parser: TOOL_CALL_PARSERS.get(name) };
  if (template === undefined) return undefined;
  const found = TOOL_CALL_PARSERS.names().find((n) =>
    TOOL_CALL_PARSERS.get(n).recognizes(template)
  );
  return found === undefined ? undefined : { name: found, parser: TOOL_CALL_PARSERS.get(found) };
}
