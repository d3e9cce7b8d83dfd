/**
 * Fixtures of the tool-calling server tests: a char tokenizer with the tool-aware char template
 * (hermes format, so the `hermes` parser is the evident one) and room for JSON, and tools whose
 * arguments are bounded (enums, no free strings), so a random model decoded under their grammar
 * finishes its calls within the token limit.
 */

import { CharTokenizer } from "../../src/model/char_tokenizer.ts";
import {
  CHAR_TOOL_CHAT_TEMPLATE,
  CHAR_TOOL_SPECIAL_TOKENS,
} from "../../src/model/chat_template.ts";
import type { TinyServerSetup } from "./_tiny_server.ts";

/** The tokenizer of the tool server's model. */
export const TOOL_TOKENIZER: CharTokenizer = new CharTokenizer(
  'abcdefghijklmnopqrstuvwxyz0123456789{}[]":,._-+= ',
  ["<pad>", "<bos>", "<eos>", ...CHAR_TOOL_SPECIAL_TOKENS],
  { chatTemplate: CHAR_TOOL_CHAT_TEMPLATE },
);

/** The tool server: longer prompts and replies than the plain tiny server. */
export const TOOL_SETUP: TinyServerSetup = {
  tokenizer: TOOL_TOKENIZER,
  limits: { maxPromptTokens: 176, maxResponseTokens: 80, maxN: 4 },
};

/**
 * Two tools: one with an enum argument and an optional flag, one without arguments. Under the
 * grammar of parallel calls the model may chain calls; {@link STOP_BIAS} makes it stop sooner.
 */
export const TOOLS = [
  {
    type: "function" as const,
    function: {
      name: "get_weather",
      description: "weather of a city",
      parameters: {
        type: "object",
        properties: { city: { enum: ["paris", "rome"] }, hot: { type: "boolean" } },
        required: ["city"],
        additionalProperties: false,
      },
    },
  },
  {
    type: "function" as const,
    function: {
      name: "get_time",
      parameters: { type: "object", properties: {}, additionalProperties: false },
    },
  },
];

/** `logit_bias` favouring the eos token (allowed only where a grammar's reply is complete). */
export const STOP_BIAS: Record<string, number> = { [String(TOOL_TOKENIZER.eosId)]: 8 };
