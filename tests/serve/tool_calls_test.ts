/**
 * Tool calling and structured output through the official `openai` client against a tiny model
 * with the tool-aware char template: `tool_choice` required / named decode valid calls of the
 * offered tools (`tool_calls` with `call_...` ids, `finish_reason: "tool_calls"`, content null),
 * `parallel_tool_calls: false` keeps one, streamed deltas arrive as OpenAI sends them and
 * reassemble to the same calls, `json_object` / `json_schema` replies parse and satisfy the
 * schema (or the request fails with a 500 naming it), and /metrics counts the calls.
 */

import OpenAI from "openai";
import { assertEquals } from "../_asserts.ts";
import { jsonSchemaProblems } from "../../src/constrained/json_schema_check.ts";
import { withServer } from "./_tiny_server.ts";
import { STOP_BIAS, TOOL_SETUP, TOOLS } from "./_tool_server.ts";

const client = (url: string) => new OpenAI({ baseURL: `${url}/v1`, apiKey: "none", maxRetries: 0 });
const ASK: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "weather in rome" }];

/** Checks `call` is a call of one of TOOLS with arguments its schema accepts. */
function checkCall(call: OpenAI.ChatCompletionMessageFunctionToolCall) {
  assertEquals(/^call_[A-Za-z0-9]{24}$/.test(call.id), true, call.id);
  assertEquals(call.type, "function");
  const tool = TOOLS.find((t) => t.function.name === call.function.name);
  assertEquals(tool !== undefined, true, call.function.name);
  assertEquals(
    jsonSchemaProblems(JSON.parse(call.function.arguments), tool!.function.parameters),
    [],
  );
}

Deno.test("tool_choice required and named: valid calls, finish_reason tool_calls; one when not parallel", async () => {
  await withServer(TOOL_SETUP, async ({ server, id }) => {
    const openai = client(server.url);
    const required = await openai.chat.completions.create({
      model: id,
      messages: ASK,
      tools: TOOLS,
      tool_choice: "required",
      n: 3,
      seed: 1,
      temperature: 1,
      logit_bias: STOP_BIAS,
    });
    for (const choice of required.choices) {
      assertEquals(choice.finish_reason, "tool_calls");
      assertEquals(choice.message.content, null);
      assertEquals(choice.message.tool_calls!.length >= 1, true);
      choice.message.tool_calls!.forEach((c) =>
        checkCall(c as OpenAI.ChatCompletionMessageFunctionToolCall)
      );
    }
    const named = await openai.chat.completions.create({
      model: id,
      messages: ASK,
      tools: TOOLS,
      tool_choice: { type: "function", function: { name: "get_weather" } },
      seed: 2,
    });
    const [call] = named.choices[0].message
      .tool_calls! as OpenAI.ChatCompletionMessageFunctionToolCall[];
    assertEquals([named.choices[0].message.tool_calls!.length, call.function.name], [
      1,
      "get_weather",
    ]);
    checkCall(call);
    const single = await openai.chat.completions.create({
      model: id,
      messages: ASK,
      tools: TOOLS,
      tool_choice: "required",
      parallel_tool_calls: false,
      n: 4,
      seed: 3,
    });
    assertEquals(single.choices.map((c) => c.message.tool_calls!.length), [1, 1, 1, 1]);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const returned = [required, named, single].flatMap((r) => r.choices)
      .reduce((sum, c) => sum + c.message.tool_calls!.length, 0);
    assertEquals(metrics.includes(`rft_tool_calls_total{model="tiny"} ${returned}`), true, metrics);
  });
});

Deno.test("streamed tool calls: id, type and name first, argument fragments after; they reassemble", async () => {
  await withServer(TOOL_SETUP, async ({ server, id }) => {
    const openai = client(server.url);
    const request = {
      model: id,
      messages: ASK,
      tools: TOOLS,
      tool_choice: "required" as const,
      seed: 9,
      logprobs: true,
      logit_bias: STOP_BIAS,
    };
    const whole = await openai.chat.completions.create(request);
    const stream = await openai.chat.completions.create({ ...request, stream: true });
    const calls: { id: string; name: string; arguments: string }[] = [];
    const finishes: (string | null)[] = [];
    let tokens = 0;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      finishes.push(choice.finish_reason);
      tokens += choice.logprobs?.content?.length ?? 0;
      for (const delta of choice.delta.tool_calls ?? []) {
        if (delta.id !== undefined) {
          assertEquals([delta.index, delta.type, delta.function?.arguments], [
            calls.length,
            "function",
            "",
          ]);
          calls.push({ id: delta.id, name: delta.function!.name!, arguments: "" });
        } else {
          assertEquals(delta.function?.name, undefined);
          calls[delta.index].arguments += delta.function!.arguments!;
        }
      }
    }
    const expected =
      (whole.choices[0].message.tool_calls! as OpenAI.ChatCompletionMessageFunctionToolCall[])
        .map((c) => ({ name: c.function.name, arguments: c.function.arguments }));
    assertEquals(calls.map(({ name, arguments: a }) => ({ name, arguments: a })), expected);
    assertEquals(calls.every((c) => /^call_/.test(c.id)), true);
    assertEquals(finishes.at(-1), "tool_calls");
    assertEquals(finishes.slice(0, -1).every((f) => f === null), true);
    assertEquals(tokens, whole.usage!.completion_tokens);
  });
});

Deno.test("json_object and json_schema replies parse and satisfy the schema; an unsatisfiable one fails clearly", async () => {
  await withServer(TOOL_SETUP, async ({ server, id }) => {
    const openai = client(server.url);
    const schema = {
      type: "object",
      properties: {
        mood: { enum: ["ok", "bad"] },
        tags: { type: "array", items: { type: "boolean" }, maxItems: 2 },
      },
      required: ["mood", "tags"],
      additionalProperties: false,
    };
    const shaped = await openai.chat.completions.create({
      model: id,
      messages: ASK,
      response_format: { type: "json_schema", json_schema: { name: "mood", schema, strict: true } },
      n: 3,
      seed: 4,
    });
    for (const choice of shaped.choices) {
      assertEquals(choice.finish_reason, "stop");
      assertEquals(jsonSchemaProblems(JSON.parse(choice.message.content!), schema), []);
    }
    const object = await openai.chat.completions.create({
      model: id,
      messages: ASK,
      response_format: { type: "json_object" },
      max_tokens: 48,
      seed: 5,
      // The tiny model writes long keys; a bias towards "}" keeps the object short.
      logit_bias: { [String(TOOL_SETUP.tokenizer!.tokenToId("}"))]: 6 },
    });
    const choice = object.choices[0];
    assertEquals(choice.finish_reason, "stop", choice.message.content!);
    const value = JSON.parse(choice.message.content!);
    assertEquals(typeof value === "object" && !Array.isArray(value), true);
    const impossible = {
      type: "object",
      properties: { w: { enum: ["ab"], pattern: "^x" } },
      required: ["w"],
    };
    const failed = await openai.chat.completions.create({
      model: id,
      messages: ASK,
      response_format: { type: "json_schema", json_schema: { name: "never", schema: impossible } },
    }).catch((err) => err);
    assertEquals(failed instanceof OpenAI.InternalServerError, true, String(failed));
    assertEquals(failed.code, "invalid_structured_output");
    assertEquals(
      failed.message.includes('breaks schema "never": /w: expected to match /^x/'),
      true,
    );
  });
});
