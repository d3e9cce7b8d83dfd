/**
 * The `hermes` tool-call parser (vLLM's name): Hermes, Qwen2.5 and Qwen3 write each call as
 * `<tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>`, several per reply, separated by
 * newlines. A last block left open (the reply stopped inside it) is read up to the end; a block
 * whose JSON is not a call (or a list of calls) stays in the text and counts as malformed.
 */

import { alt, literal, optional, repeat, seq } from "../constrained/grammar.ts";
import {
  asToolCalls,
  callObjectGrammar,
  type ParsedReply,
  type ParsedToolCall,
  type ToolCallParser,
} from "./tool_call_parser.ts";

const START = "<tool_call>";
const END = "</tool_call>";

/** The calls of one block's JSON text, or undefined when it is not valid JSON of calls. */
function readBlock(body: string): ParsedToolCall[] | undefined {
  try {
    return asToolCalls(JSON.parse(body));
  } catch {
    return undefined;
  }
}

/** See the file comment. */
export const hermesParser: ToolCallParser = {
  description: 'Hermes, Qwen2.5, Qwen3: <tool_call>{"name": ..., "arguments": ...}</tool_call>',
  recognizes: (template) => template.includes(START),
  parse(text: string): ParsedReply {
    const calls: ParsedToolCall[] = [];
    const kept: string[] = [];
    let malformed = 0;
    let at = 0;
    while (at < text.length) {
      const start = text.indexOf(START, at);
      if (start < 0) break;
      kept.push(text.slice(at, start));
      const end = text.indexOf(END, start + START.length);
      const stop = end < 0 ? text.length : end + END.length;
      const read = readBlock(text.slice(start + START.length, end < 0 ? text.length : end).trim());
      if (read) calls.push(...read);
      else {
        malformed++;
        kept.push(text.slice(start, stop));
      }
      at = stop;
    }
    kept.push(text.slice(at));
    return { content: kept.join("").trim(), calls, malformed };
  },
  callsGrammar(tools, parallel) {
    const newline = () => optional(literal("\n"));
    const call = seq(
      literal(START),
      newline(),
      alt(...tools.map((tool) => callObjectGrammar(tool, "arguments"))),
      newline(),
      literal(END),
    );
    return repeat(call, { min: 1, max: parallel ? Infinity : 1, separator: newline() });
  },
};
