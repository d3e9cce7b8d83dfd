/**
 * The request fields the OpenAI API defines, decided one by one: implemented ones are read,
 * fields that change nothing (what LangChain and the `openai` client send: `metadata`, `store`,
 * `service_tier`, `user`, prompt caching, `prediction`, ...) are accepted and leave the reply
 * as it is, fields rft cannot honour and fields outside the API are one clear 400 naming them.
 */

import OpenAI from "openai";
import { assertEquals, assertThrows } from "../_asserts.ts";
import { ApiError } from "../../src/serve/api_error.ts";
import { parseCompletionRequest } from "../../src/serve/completion_request.ts";
import { withServer } from "./_tiny_server.ts";
import { TOOL_SETUP, TOOLS } from "./_tool_server.ts";

const LIMITS = { maxN: 4, maxTokens: 8 };
const chat = (more: Record<string, unknown>) =>
  parseCompletionRequest("chat", { messages: [{ role: "user", content: "x" }], ...more }, LIMITS);

/** Fields that change nothing rft computes, as a client would send them. */
const NO_OPS = {
  metadata: { run: "7" },
  store: false,
  service_tier: "auto",
  user: "u1",
  safety_identifier: "s",
  prompt_cache_key: "k",
  prompt_cache_retention: "24h",
  prediction: { type: "content", content: "hi" },
  verbosity: "low",
  modalities: ["text"],
  audio: null,
  web_search_options: null,
  stream_options: null,
};

Deno.test("implemented fields are read: penalties, logit bias, tools, choice, format, template variables", () => {
  const request = chat({
    frequency_penalty: 0.5,
    presence_penalty: -1,
    logit_bias: { "3": -100, "7": 2.5 },
    tools: TOOLS,
    tool_choice: {
      type: "allowed_tools",
      allowed_tools: {
        mode: "required",
        tools: [{ type: "function", function: { name: "get_time" } }],
      },
    },
    parallel_tool_calls: false,
    response_format: {
      type: "json_schema",
      json_schema: { name: "x", schema: { type: "object" } },
    },
    reasoning_effort: "low",
    chat_template_kwargs: { enable_thinking: false },
    return_token_ids: true,
  });
  assertEquals([request.frequencyPenalty, request.presencePenalty, request.logitBias], [0.5, -1, {
    3: -100,
    7: 2.5,
  }]);
  assertEquals(request.toolChoice, { mode: "required", allowed: ["get_time"], single: false });
  assertEquals([request.parallelToolCalls, request.returnTokenIds], [false, true]);
  assertEquals(request.responseFormat, {
    type: "json_schema",
    name: "x",
    schema: { type: "object" },
    strict: false,
  });
  assertEquals(request.templateVariables, { enable_thinking: false, reasoning_effort: "low" });
  assertEquals(chat({ tools: TOOLS }).toolChoice, { mode: "auto", single: false });
  assertEquals(chat({}).toolChoice, { mode: "none", single: false });
  assertEquals(chat(NO_OPS).messages, [{ role: "user", content: "x" }]);
});

Deno.test("values at the API's edges: 64-bit seeds, top_p 0, tool_choice auto without tools", () => {
  assertEquals([chat({ seed: -1 }).seed, chat({ seed: 2 ** 32 + 5 }).seed], [2 ** 32 - 1, 5]);
  assertEquals([chat({ top_p: 0 }).topK, chat({ top_p: 0 }).topP], [1, undefined]);
  assertEquals([chat({ top_p: 0.5 }).topP, chat({ top_p: 0.5 }).topK], [0.5, undefined]);
  assertEquals(chat({ tools: [], tool_choice: "auto" }).toolChoice, {
    mode: "none",
    single: false,
  });
  const echoed = {
    role: "assistant",
    content: null,
    tool_calls: [{
      index: 0,
      id: "c1",
      type: "function",
      function: { name: "f", arguments: "{}" },
    }],
  };
  assertEquals(chat({ messages: [echoed] }).messages[0].tool_calls![0].id, "c1");
});

Deno.test("the deprecated functions API is read as the tools API it predates", () => {
  const request = chat({
    messages: [
      { role: "user", content: "x" },
      { role: "assistant", content: null, function_call: { name: "f", arguments: '{"a":1}' } },
      { role: "function", name: "f", content: "2" },
    ],
    functions: [{ name: "f", parameters: { type: "object" } }],
    function_call: { name: "f" },
    parallel_tool_calls: true,
  });
  assertEquals(request.tools, [{
    type: "function",
    function: { name: "f", parameters: { type: "object" } },
  }]);
  assertEquals(request.toolChoice, { mode: "required", allowed: ["f"], single: true });
  assertEquals([request.legacyFunctions, request.parallelToolCalls], [true, false]);
  assertEquals(request.messages.slice(1), [
    {
      role: "assistant",
      content: "",
      tool_calls: [{
        id: "call_legacy_1",
        type: "function",
        function: { name: "f", arguments: '{"a":1}' },
      }],
    },
    { role: "tool", content: "2", name: "f", tool_call_id: "call_legacy_1" },
  ]);
  const auto = chat({ functions: [{ name: "f" }], function_call: "auto" });
  assertEquals([auto.toolChoice.mode, auto.legacyFunctions], ["auto", true]);
  assertEquals(chat({ tools: TOOLS }).legacyFunctions, false);
});

Deno.test("fields rft cannot honour and fields outside the API are one 400 naming them", () => {
  const cases: [Record<string, unknown>, string, string][] = [
    [{ functions: [{ name: "f" }], tools: TOOLS }, "functions", 'either "tools" or "functions"'],
    [{ functions: [{ name: "f" }], function_call: { name: "g" } }, "function_call", "naming one"],
    [{ functions: [{ name: "bad name" }] }, "functions[0].name", "letters, digits"],
    [
      { messages: [{ role: "function", name: "f", content: "x" }] },
      "messages[0]",
      "answers no assistant function_call",
    ],
    [{ messages: [{ role: "function", content: "x" }] }, "messages[0].name", 'needs "name"'],
    [{ modalities: ["text", "audio"] }, "modalities", "text only"],
    [{ audio: { voice: "x", format: "mp3" } }, "audio", "audio model"],
    [{ web_search_options: {} }, "web_search_options", "no web search"],
    [{ top_k_p: 1 }, "top_k_p", 'unknown field "top_k_p"'],
    [{ logit_bias: { "x": 1 } }, "logit_bias", "token ids mapped to numbers"],
    [{ logit_bias: { "1": 101 } }, "logit_bias", "[-100, 100]"],
    [{ frequency_penalty: 3 }, "frequency_penalty", "[-2, 2]"],
    [{ tool_choice: "required" }, "tool_choice", '"required" needs "tools"'],
    [
      { tools: TOOLS, tool_choice: { type: "function", function: { name: "nope" } } },
      "tool_choice.function.name",
      'no tool is named "nope"',
    ],
    [
      { tools: [{ type: "custom", custom: { name: "c" } }] },
      "tools[0].type",
      "custom tools are not supported",
    ],
    [{ tools: [TOOLS[0], TOOLS[0]] }, "tools", 'function "get_weather" is defined twice'],
    [
      { response_format: { type: "json_schema", json_schema: { name: "bad name" } } },
      "response_format.json_schema.name",
      "letters, digits",
    ],
    [{ response_format: { type: "yaml" } }, "response_format.type", 'expected one of "text"'],
    [{ reasoning_effort: "max" }, "reasoning_effort", 'expected one of "none"'],
    [
      { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "x" } }] }] },
      "messages[0].content[0]",
      'received a "image_url" part',
    ],
    [
      { messages: [{ role: "tool", content: "x" }] },
      "messages[0].tool_call_id",
      'needs "tool_call_id"',
    ],
    [
      {
        messages: [{
          role: "assistant",
          content: null,
          tool_calls: [{ id: "1", type: "function", function: { name: "f", arguments: "{bad" } }],
        }],
      },
      "messages[0].tool_calls[0].function.arguments",
      "expected JSON of an object",
    ],
  ];
  for (const [body, param, text] of cases) {
    let error: ApiError | undefined;
    try {
      chat(body);
    } catch (err) {
      error = err as ApiError;
    }
    assertEquals([error?.status, error?.param], [400, param], JSON.stringify(body));
    assertEquals(error!.message.includes(text), true, `${error!.message} lacks ${text}`);
  }
  const text = (more: Record<string, unknown>) =>
    parseCompletionRequest("text", { prompt: "x", ...more }, LIMITS);
  assertEquals([text({ echo: true }).echo, text({}).echo], [true, false]);
  assertThrows(() => text({ suffix: "end" }), ApiError, "insertion");
  assertThrows(() => text({ best_of: 2, stream: true }), ApiError, "cannot be used");
  assertEquals(text({ best_of: 3, n: 2, echo: false, suffix: null }).bestOf, 3);
});

Deno.test("no-op fields leave the reply as it is; best_of keeps the most likely samples", async () => {
  await withServer(TOOL_SETUP, async ({ server, id }) => {
    const openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "none", maxRetries: 0 });
    const messages = [{ role: "user" as const, content: "hello" }];
    const base = { model: id, messages, max_tokens: 6, seed: 3, logprobs: true };
    const plain = await openai.chat.completions.create(base);
    const extra = await openai.chat.completions.create({ ...base, ...NO_OPS } as typeof base);
    assertEquals(extra.choices[0].message.content, plain.choices[0].message.content);
    const sum = (c: OpenAI.Completions.CompletionChoice) =>
      c.logprobs!.token_logprobs!.reduce((a, b) => a + b!, 0);
    const all = await openai.completions.create({
      model: id,
      prompt: "hello",
      max_tokens: 5,
      n: 4,
      seed: 8,
      logprobs: 0,
    });
    const best = await openai.completions.create({
      model: id,
      prompt: "hello",
      max_tokens: 5,
      n: 2,
      best_of: 4,
      seed: 8,
      logprobs: 0,
    });
    const top = all.choices.map(sum).sort((a, b) => b - a).slice(0, 2);
    assertEquals(best.choices.map(sum).sort((a, b) => b - a), top);
  });
});
