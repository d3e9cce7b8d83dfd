/**
 * The tool-call parsers on replies as models write them: hermes with several calls, a last one
 * left open, malformed JSON kept as text and counted, a list of calls in one block; llama3_json
 * with `<|python_tag|>` and `;`; the grammar of calls accepts what the Qwen template writes; and
 * a model's parser is chosen by name or by its chat template.
 */

import { assertEquals, assertThrows } from "../_asserts.ts";
import { ByteAutomaton, DEAD } from "../../src/constrained/byte_automaton.ts";
import type { ToolDefinition } from "../../src/model/chat_template.ts";
import { chooseToolCallParser, TOOL_CALL_PARSERS, toolCallId } from "../../src/tool_calls/mod.ts";
import { loadQwenTokenizer } from "./_qwen.ts";

const hermes = TOOL_CALL_PARSERS.get("hermes");
const llama = TOOL_CALL_PARSERS.get("llama3_json");

const WEATHER: ToolDefinition = {
  type: "function",
  function: {
    name: "get_weather",
    parameters: {
      type: "object",
      properties: { city: { type: "string" }, unit: { enum: ["c", "f"] } },
      required: ["city"],
    },
  },
};
const TIME: ToolDefinition = {
  type: "function",
  function: { name: "get_time", parameters: { type: "object", properties: {} } },
};

Deno.test("hermes: several calls, text around them, an unclosed last call", () => {
  const reply =
    'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n' +
    '</tool_call>\n<tool_call>\n{"name": "get_time", "arguments": "{\\"tz\\": \\"CET\\"}"}\n</tool_call>\n' +
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome", "unit": "c"}}';
  assertEquals(hermes.parse(reply), {
    content: "Let me check.",
    calls: [
      { name: "get_weather", arguments: { city: "Paris" } },
      { name: "get_time", arguments: { tz: "CET" } },
      { name: "get_weather", arguments: { city: "Rome", unit: "c" } },
    ],
    malformed: 0,
  });
  assertEquals(hermes.parse("no calls here ").content, "no calls here");
});

Deno.test("hermes: malformed blocks stay text and are counted; a list of calls in one block", () => {
  const bad = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"\n</tool_call>';
  const noName = '<tool_call>{"arguments": {}}</tool_call>';
  const good =
    '<tool_call>[{"name": "get_time", "arguments": {}}, {"name": "x", "parameters": {"a": 1}}]</tool_call>';
  assertEquals(hermes.parse(`${bad}\n${noName}\n${good}`), {
    content: `${bad}\n${noName}`,
    calls: [{ name: "get_time", arguments: {} }, { name: "x", arguments: { a: 1 } }],
    malformed: 2,
  });
  const open = hermes.parse("<tool_call>{oops");
  assertEquals([open.content, open.calls.length, open.malformed], ["<tool_call>{oops", 0, 1]);
});

Deno.test("llama3_json: python tag, ';'-separated calls, text and malformed replies", () => {
  assertEquals(
    llama.parse(
      '<|python_tag|>{"name": "get_time", "parameters": {}}; {"name": "get_weather", "arguments": {"city": "Oslo"}}',
    ),
    {
      content: "",
      calls: [{ name: "get_time", arguments: {} }, {
        name: "get_weather",
        arguments: { city: "Oslo" },
      }],
      malformed: 0,
    },
  );
  assertEquals(llama.parse("It is sunny."), { content: "It is sunny.", calls: [], malformed: 0 });
  assertEquals(llama.parse('{"name": "get_time", "parameters": {} trailing'), {
    content: '{"name": "get_time", "parameters": {} trailing',
    calls: [],
    malformed: 1,
  });
});

/** Whether `grammar` accepts all of `text`. */
function accepts(automaton: ByteAutomaton, text: string): boolean {
  const state = automaton.walk(automaton.start, new TextEncoder().encode(text));
  return state !== DEAD && automaton.accepting(state);
}

Deno.test("the calls grammar accepts the Qwen template's calls and nothing else", async () => {
  const tokenizer = await loadQwenTokenizer();
  const calls = [
    {
      id: "call_1",
      type: "function" as const,
      function: { name: "get_weather", arguments: { city: "Paris" } },
    },
    { id: "call_2", type: "function" as const, function: { name: "get_time", arguments: {} } },
  ];
  const rendered = tokenizer.applyChatTemplate([
    { role: "user", content: "?" },
    { role: "assistant", content: "", tool_calls: calls },
  ]);
  const written = rendered.slice(
    rendered.indexOf("<tool_call>"),
    rendered.lastIndexOf("<|im_end|>"),
  );
  const parallel = new ByteAutomaton(hermes.callsGrammar([WEATHER, TIME], true));
  const single = new ByteAutomaton(hermes.callsGrammar([WEATHER, TIME], false));
  assertEquals(accepts(parallel, written), true, written);
  assertEquals(accepts(single, written), false);
  assertEquals(accepts(single, written.slice(0, written.indexOf("</tool_call>") + 12)), true);
  assertEquals(accepts(parallel, written.replace('"Paris"', "3")), false);
  assertEquals(accepts(parallel, written.replace("get_time", "get_date")), false);
  const llamaCalls = new ByteAutomaton(llama.callsGrammar([WEATHER, TIME], true));
  assertEquals(
    accepts(
      llamaCalls,
      '{"name": "get_weather", "parameters": {"city": "Oslo", "unit": "f"}}; {"name": "get_time", "parameters": {}}',
    ),
    true,
  );
});

Deno.test("the parser of a model: by name, else by its chat template's format", async () => {
  const qwen = await loadQwenTokenizer();
  assertEquals(chooseToolCallParser(undefined, qwen.chatTemplateSource)?.name, "hermes");
  assertEquals(chooseToolCallParser(undefined, "{{ '<|python_tag|>' }}")?.name, "llama3_json");
  assertEquals(chooseToolCallParser(undefined, "{{ messages }}"), undefined);
  assertEquals(chooseToolCallParser("llama3_json", qwen.chatTemplateSource)?.name, "llama3_json");
  assertThrows(() => chooseToolCallParser("hermez", undefined), Error, 'Did you mean "hermes"?');
  assertEquals(/^call_[A-Za-z0-9]{24}$/.test(toolCallId()), true);
});
