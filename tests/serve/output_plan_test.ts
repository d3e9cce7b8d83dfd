/**
 * Reading replies under an output plan, without a model: hermes calls become tool calls,
 * malformed blocks and calls of tools not offered (or breaking a strict tool's schema) stay text
 * and are counted, `parallel_tool_calls: false` keeps the first call, and content that must be
 * JSON is checked (a failure is a 500 naming the schema; a reply cut at the length limit is not
 * checked). Plans: what needs a parser is refused without one.
 */

import { assertEquals, assertThrows } from "../_asserts.ts";
import type { ToolDefinition } from "../../src/model/chat_template.ts";
import { ApiError } from "../../src/serve/api_error.ts";
import { parseCompletionRequest } from "../../src/serve/completion_request.ts";
import { type OutputPlan, OutputPlanner, readReply } from "../../src/serve/output_plan.ts";
import { chooseToolCallParser } from "../../src/tool_calls/mod.ts";
import { TOOL_TOKENIZER, TOOLS } from "./_tool_server.ts";

const hermes = chooseToolCallParser("hermes", undefined);
const STRICT: ToolDefinition = {
  type: "function",
  function: {
    name: "set_level",
    strict: true,
    parameters: { type: "object", properties: { level: { type: "integer", maximum: 3 } } },
  },
};

const plan = (more: Partial<OutputPlan> = {}): OutputPlan => ({
  tools: [...TOOLS, STRICT],
  single: false,
  parser: hermes,
  ...more,
});

Deno.test("auto replies: calls read, malformed and foreign calls left as text and counted", () => {
  const good = '<tool_call>{"name":"get_weather","arguments":{"city":"rome"}}</tool_call>';
  const broken = '<tool_call>{"name":"get_time","arguments":{</tool_call>';
  const foreign = '<tool_call>{"name":"launch","arguments":{}}</tool_call>';
  const tooHigh = '<tool_call>{"name":"set_level","arguments":{"level":9}}</tool_call>';
  const reply = readReply(plan(), `ok ${good}${broken}${foreign}${tooHigh}`, false);
  assertEquals(reply.calls, [{ name: "get_weather", arguments: { city: "rome" } }]);
  assertEquals(reply.malformed, 3);
  assertEquals(
    reply.content,
    `ok ${broken}\n{"name":"launch","arguments":{}}\n{"name":"set_level","arguments":{"level":9}}`,
  );
  assertEquals(readReply(plan(), good, false).content, null);
  const two = readReply(plan({ single: true }), good + good.replace("rome", "paris"), false);
  assertEquals(two.calls.length, 1);
  assertEquals(readReply(plan(), "plain words", false), {
    content: "plain words",
    calls: [],
    malformed: 0,
  });
});

Deno.test("JSON replies are checked: not JSON or breaking the schema is a 500, cut replies are not", () => {
  const schema = { type: "object", properties: { n: { type: "integer", minimum: 10 } } };
  const json = plan({ parser: undefined, json: { schema, name: "counter" } });
  assertEquals(readReply(json, '{"n": 12}', false).content, '{"n": 12}');
  let err: ApiError | undefined;
  try {
    readReply(json, '{"n": 3}', false);
  } catch (e) {
    err = e as ApiError;
  }
  assertEquals([err?.status, err?.code], [500, "invalid_structured_output"]);
  assertEquals(err?.message.includes('breaks schema "counter": /n: expected >= 10, found 3'), true);
  assertThrows(() => readReply(json, '{"n": 1', false), ApiError, "is not JSON");
  assertEquals(readReply(json, '{"n": 1', true).content, '{"n": 1');
  const object = plan({ parser: undefined, json: { name: "json_object" } });
  assertThrows(() => readReply(object, "[1, 2]", false), ApiError, "not a JSON object");
});

Deno.test("plans: required and named calls decode under a grammar; no parser refuses them", () => {
  const chat = (body: Record<string, unknown>) =>
    parseCompletionRequest(
      "chat",
      { messages: [{ role: "user", content: "x" }], tools: TOOLS, ...body },
      { maxN: 1, maxTokens: 8 },
    );
  const planner = new OutputPlanner(TOOL_TOKENIZER, hermes, [TOOL_TOKENIZER.eosId!]);
  const named = planner.plan(
    chat({ tool_choice: { type: "function", function: { name: "get_time" } } }),
  );
  assertEquals([named.tools.map((t) => t.function.name), named.single, !!named.grammar], [
    ["get_time"],
    true,
    true,
  ]);
  assertEquals(planner.plan(chat({})).grammar, undefined);
  assertEquals(!!planner.plan(chat({ response_format: { type: "json_object" } })).grammar, true);
  assertEquals(planner.plan(chat({ tool_choice: "none" })).tools, []);
  const none = new OutputPlanner(TOOL_TOKENIZER, undefined, [2]);
  assertThrows(() => none.plan(chat({})), ApiError, "--tool-call-parser");
  const noAuto = new OutputPlanner(TOOL_TOKENIZER, hermes, [2], false);
  assertThrows(() => noAuto.plan(chat({})), ApiError, "enable_auto_tool_choice is false");
  assertEquals(!!noAuto.plan(chat({ tool_choice: "required" })).grammar, true);
});
