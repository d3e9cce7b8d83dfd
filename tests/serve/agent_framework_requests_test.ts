/**
 * Request bodies as agent frameworks send them to `/v1/chat/completions` and `/v1/completions`
 * (the `openai` SDKs, LangChain/LangGraph, the OpenAI Agents SDK, the Vercel AI SDK, AutoGen,
 * CrewAI/LiteLLM, LlamaIndex), raw JSON over HTTP: each is served (a 200 with a reply of the
 * asked shape), never refused for a field the OpenAI API defines.
 */

import { assertEquals } from "../_asserts.ts";
import { withServer } from "./_tiny_server.ts";
import { STOP_BIAS, TOOL_SETUP, TOOLS } from "./_tool_server.ts";

type Body = Record<string, unknown>;

const STRICT_TOOLS = TOOLS.map((t) => ({
  ...t,
  function: {
    ...t.function,
    strict: true,
    parameters: {
      ...t.function.parameters,
      required: Object.keys(t.function.parameters.properties),
    },
  },
}));

const CALL = {
  id: "call_abc",
  type: "function",
  function: { name: "get_weather", arguments: '{"city":"rome"}' },
};

/** A history as the python SDK dumps the message it got back, then the tool's result. */
const HISTORY = [
  { role: "system", content: "be brief" },
  { role: "user", content: "weather in rome" },
  {
    role: "assistant",
    content: null,
    refusal: null,
    annotations: [],
    audio: null,
    function_call: null,
    tool_calls: [CALL],
  },
  { role: "tool", tool_call_id: "call_abc", content: [{ type: "text", text: "sunny" }] },
];

/** Framework-shaped chat bodies (without `model`), each with what the reply must show. */
const CHAT_BODIES: [string, Body, (body: Body) => void][] = [
  [
    "openai-python with bookkeeping fields",
    {
      messages: [{ role: "user", content: "weather in rome" }],
      tools: TOOLS,
      tool_choice: "required",
      parallel_tool_calls: true,
      temperature: 1,
      max_completion_tokens: 80,
      seed: 7,
      user: "u1",
      metadata: { run: "1" },
      store: false,
      service_tier: "auto",
      logit_bias: STOP_BIAS,
    },
    (reply) => assertEquals(choice(reply).finish_reason, "tool_calls"),
  ],
  [
    "OpenAI Agents SDK: developer role, strict tools, named tool choice",
    {
      messages: [
        { role: "developer", content: "you answer weather" },
        { role: "user", content: [{ type: "text", text: "rome" }], name: "alice" },
      ],
      tools: STRICT_TOOLS,
      tool_choice: { type: "function", function: { name: "get_weather" } },
      parallel_tool_calls: false,
      top_p: 1,
      store: false,
      logit_bias: STOP_BIAS,
      max_tokens: 80,
    },
    (reply) => {
      const calls = message(reply).tool_calls as Body[];
      if (!calls) throw new Error(JSON.stringify(reply));
      assertEquals(calls.length, 1);
      assertEquals((calls[0].function as Body).name, "get_weather");
    },
  ],
  [
    "a tool result sent back (python SDK message dump, text parts), tool_choice none",
    {
      messages: HISTORY,
      tools: TOOLS,
      tool_choice: "none",
      max_tokens: 4,
      stop: "zz",
      frequency_penalty: 0,
      presence_penalty: 0,
      top_logprobs: null,
      n: 1,
    },
    (reply) => assertEquals(typeof message(reply).content, "string"),
  ],
  [
    "LangChain: n > 1 with tools, logprobs, stop as a list",
    {
      messages: [{ role: "user", content: "weather" }],
      tools: TOOLS,
      tool_choice: "auto",
      n: 3,
      logprobs: true,
      top_logprobs: 2,
      stop: ["qq", "zz"],
      max_tokens: 20,
      seed: 4,
    },
    (reply) => {
      const choices = reply.choices as Body[];
      assertEquals(choices.map((c) => c.index), [0, 1, 2]);
      for (const c of choices) {
        const logprobs = (c.logprobs as { content: Body[] }).content;
        assertEquals(logprobs.every((l) => (l.top_logprobs as unknown[]).length === 2), true);
      }
    },
  ],
  [
    "AutoGen / LlamaIndex structured output: json_schema strict with $defs and $ref",
    {
      messages: [{ role: "user", content: "mood" }],
      response_format: {
        type: "json_schema",
        json_schema: {
          name: "Mood",
          strict: true,
          schema: {
            $defs: { Level: { enum: ["ok", "bad"], title: "Level", type: "string" } },
            properties: { level: { $ref: "#/$defs/Level" }, sure: { type: "boolean" } },
            required: ["level", "sure"],
            title: "Mood",
            type: "object",
            additionalProperties: false,
          },
        },
      },
      max_tokens: 80,
      logit_bias: STOP_BIAS,
    },
    (reply) => {
      const value = JSON.parse(message(reply).content as string);
      assertEquals(["ok", "bad"].includes(value.level), true);
      assertEquals(typeof value.sure, "boolean");
    },
  ],
  [
    "LiteLLM / CrewAI: explicit nulls, an empty tool list, tool_choice auto",
    {
      messages: [{ role: "user", content: "hi" }],
      tools: [],
      tool_choice: "auto",
      temperature: null,
      top_p: null,
      max_tokens: null,
      stop: null,
      stream: false,
      seed: -1,
      reasoning_effort: null,
    },
    (reply) => assertEquals(message(reply).tool_calls, undefined),
  ],
  [
    "legacy functions and function_call (older LangChain, AutoGen 0.2)",
    {
      messages: [
        { role: "user", content: "weather in rome" },
        {
          role: "assistant",
          content: null,
          function_call: { name: "get_weather", arguments: '{"city":"rome"}' },
        },
        { role: "function", name: "get_weather", content: "sunny" },
        { role: "user", content: "and paris" },
      ],
      functions: TOOLS.map((t) => t.function),
      function_call: { name: "get_weather" },
      max_tokens: 80,
      logit_bias: STOP_BIAS,
    },
    (reply) => {
      assertEquals(choice(reply).finish_reason, "function_call");
      const call = message(reply).function_call as Body;
      assertEquals(call.name, "get_weather");
      assertEquals(typeof JSON.parse(call.arguments as string).city, "string");
      assertEquals(message(reply).tool_calls, undefined);
    },
  ],
];

const choice = (reply: Body) => (reply.choices as Body[])[0];
const message = (reply: Body) => choice(reply).message as Body;

function request(url: string, path: string, body: Body): Promise<Response> {
  return fetch(`${url}/v1${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function post(url: string, path: string, body: Body): Promise<[number, Body]> {
  const response = await request(url, path, body);
  return [response.status, await response.json()];
}

/** The chunks of a server-sent event stream, checked to end with `[DONE]`. */
async function streamed(url: string, path: string, body: Body): Promise<Body[]> {
  const response = await request(url, path, body);
  const text = await response.text();
  assertEquals(response.status, 200, text);
  const events = text.split("\n\n").filter((e) => e !== "").map((e) => e.replace(/^data: /, ""));
  assertEquals(events.at(-1), "[DONE]");
  return events.slice(0, -1).map((e) => JSON.parse(e));
}

/** Streamed tool-call deltas put together as clients do (by index; id, type, name first). */
function reassemble(chunks: Body[]): { id: string; name: string; arguments: string }[] {
  const calls: { id: string; name: string; arguments: string }[] = [];
  for (const chunk of chunks) {
    for (const c of chunk.choices as Body[]) {
      for (const delta of ((c.delta as Body).tool_calls ?? []) as Body[]) {
        const fn = delta.function as Body;
        const i = delta.index as number;
        if (calls[i] === undefined) {
          assertEquals([typeof delta.id, delta.type, typeof fn.name], [
            "string",
            "function",
            "string",
          ]);
          calls[i] = { id: delta.id as string, name: fn.name as string, arguments: "" };
        }
        calls[i].arguments += fn.arguments ?? "";
      }
    }
  }
  return calls;
}

Deno.test("chat bodies of agent frameworks are served", async () => {
  await withServer(TOOL_SETUP, async ({ server, id }) => {
    for (const [what, body, check] of CHAT_BODIES) {
      const [status, reply] = await post(server.url, "/chat/completions", { model: id, ...body });
      assertEquals(status, 200, `${what}: ${JSON.stringify(reply)}`);
      check(reply);
    }
  });
});

Deno.test("streamed bodies of agent frameworks: tool-call deltas, usage last, legacy function_call", async () => {
  await withServer(TOOL_SETUP, async ({ server, id }) => {
    // The Vercel AI SDK and the Agents SDK stream with usage; a named tool choice.
    const chunks = await streamed(server.url, "/chat/completions", {
      model: id,
      messages: [{ role: "user", content: "weather in paris" }],
      tools: STRICT_TOOLS,
      tool_choice: { type: "function", function: { name: "get_weather" } },
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 80,
      logit_bias: STOP_BIAS,
    });
    const [call] = reassemble(chunks);
    assertEquals(call.name, "get_weather");
    assertEquals(["paris", "rome"].includes(JSON.parse(call.arguments).city), true);
    const usage = chunks.at(-1)!;
    assertEquals(usage.choices, []);
    assertEquals((usage.usage as Body).total_tokens as number > 0, true);
    const finish = chunks.at(-2)!.choices as Body[];
    assertEquals(finish[0].finish_reason, "tool_calls");

    const legacy = await streamed(server.url, "/chat/completions", {
      model: id,
      messages: [{ role: "user", content: "weather" }],
      functions: TOOLS.map((t) => t.function),
      function_call: { name: "get_weather" },
      stream: true,
      max_tokens: 80,
      logit_bias: STOP_BIAS,
    });
    const deltas = legacy.map((c) => (c.choices as Body[])[0].delta as Body);
    const parts = deltas.map((d) => d.function_call as Body | undefined).filter((f) => f);
    assertEquals(parts[0]!.name, "get_weather");
    JSON.parse(parts.map((f) => f!.arguments).join(""));
    assertEquals(deltas.some((d) => d.tool_calls !== undefined), false);
    assertEquals((legacy.at(-1)!.choices as Body[])[0].finish_reason, "function_call");
  });
});

Deno.test("text completions as LangChain's OpenAI LLM and LlamaIndex send them; the model list", async () => {
  await withServer(TOOL_SETUP, async ({ server, id }) => {
    const body = {
      model: id,
      prompt: ["weather", "time"],
      max_tokens: 5,
      stop: "zz",
      logprobs: 2,
      echo: false,
      n: 1,
      best_of: 1,
      user: "u1",
      seed: 2 ** 40 + 3,
      temperature: 0.7,
      top_p: 0,
      frequency_penalty: 0,
      presence_penalty: 0,
    };
    const [status, reply] = await post(server.url, "/completions", body);
    assertEquals(status, 200, JSON.stringify(reply));
    assertEquals((reply.choices as Body[]).length, 2);
    const chunks = await streamed(server.url, "/completions", {
      ...body,
      stream: true,
      stream_options: { include_usage: true },
    });
    assertEquals(chunks.at(-1)!.choices, []);

    const models = await (await fetch(`${server.url}/v1/models`)).json();
    assertEquals(models.data.map((m: Body) => m.id), [id]);
    const one = await fetch(`${server.url}/v1/models/${id}`);
    assertEquals(await one.json(), { id, object: "model", created: 0, owned_by: "rft" });
    const missing = await fetch(`${server.url}/v1/models/gpt-4o`);
    assertEquals(missing.status, 404);
    assertEquals((await missing.json()).error.code, "model_not_found");
  });
});

Deno.test("unreadable schemas and fields outside the API are one 400 naming them, never a 500", async () => {
  await withServer(TOOL_SETUP, async ({ server, id }) => {
    const badRef = { type: "object", properties: { a: { $ref: "#/$defs/missing" } } };
    const badTool = { type: "function", function: { name: "f", parameters: badRef } };
    const cases: [Body, string, string][] = [
      [
        { response_format: { type: "json_schema", json_schema: { name: "x", schema: badRef } } },
        "response_format.json_schema.schema",
        '"$ref" #/$defs/missing does not resolve',
      ],
      [{ tools: [badTool], tool_choice: "required" }, "tools", "does not resolve"],
      [{ min_p: 0.1 }, "min_p", 'unknown field "min_p"'],
      [{ functions: [TOOLS[0].function], tools: TOOLS }, "functions", "either"],
    ];
    for (const [extra, param, text] of cases) {
      const body = { model: id, messages: [{ role: "user", content: "x" }], ...extra };
      const [status, reply] = await post(server.url, "/chat/completions", body);
      const error = reply.error as Body;
      assertEquals([status, error.param], [400, param], JSON.stringify(reply));
      assertEquals((error.message as string).includes(text), true, error.message as string);
    }
  });
});
