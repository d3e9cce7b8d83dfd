/**
 * Two more agent frameworks against the server, offline, as their users write them: the Vercel
 * AI SDK (`generateText` / `streamText` with tools through `@ai-sdk/openai-compatible`, usage
 * streamed) and the OpenAI Agents SDK (an `Agent` with a function tool on
 * `OpenAIChatCompletionsModel`, run plain and streamed). Each gets its tool call back, runs the
 * tool, and the Agents SDK sends the result back in the next request.
 */

import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import {
  Agent,
  OpenAIChatCompletionsModel,
  run,
  setTracingDisabled,
  tool as agentTool,
} from "@openai/agents";
import { generateText, jsonSchema, streamText, tool } from "ai";
import OpenAI from "openai";
import { assertEquals } from "../_asserts.ts";
import { jsonSchemaProblems } from "../../src/constrained/json_schema_check.ts";
import { withServer } from "./_tiny_server.ts";
import { STOP_BIAS, TOOL_SETUP, TOOLS } from "./_tool_server.ts";

const WEATHER = { ...TOOLS[0].function, description: "weather of a city" };

Deno.test("Vercel AI SDK: generateText and streamText get tool calls with valid arguments", async () => {
  await withServer(TOOL_SETUP, async ({ server, id }) => {
    const provider = createOpenAICompatible({
      name: "rft",
      baseURL: `${server.url}/v1`,
      includeUsage: true,
    });
    const tools = {
      get_weather: tool({
        description: WEATHER.description,
        inputSchema: jsonSchema(WEATHER.parameters as Parameters<typeof jsonSchema>[0]),
      }),
    };
    const options = {
      model: provider(id),
      prompt: "weather in rome",
      tools,
      maxOutputTokens: 80,
      seed: 3,
      providerOptions: { rft: { logit_bias: STOP_BIAS } },
    };
    const generated = await generateText({ ...options, toolChoice: "required" });
    assertEquals(generated.finishReason, "tool-calls");
    assertEquals(generated.toolCalls.length >= 1, true);
    for (const call of generated.toolCalls) {
      assertEquals([call.toolName, jsonSchemaProblems(call.input, WEATHER.parameters)], [
        "get_weather",
        [],
      ]);
    }
    const streamed = streamText({
      ...options,
      toolChoice: { type: "tool", toolName: "get_weather" },
    });
    const calls = await streamed.toolCalls;
    assertEquals(calls.length, 1);
    assertEquals(jsonSchemaProblems(calls[0].input, WEATHER.parameters), []);
    assertEquals(await streamed.finishReason, "tool-calls");
    assertEquals((await streamed.totalUsage).outputTokens! > 0, true);
  });
});

Deno.test("OpenAI Agents SDK: an agent calls its function tool, plain and streamed", async () => {
  setTracingDisabled(true);
  await withServer(TOOL_SETUP, async ({ server, id }) => {
    const sent: Record<string, unknown>[] = [];
    const client = new OpenAI({
      baseURL: `${server.url}/v1`,
      apiKey: "none",
      maxRetries: 0,
      fetch: (input, init) => {
        sent.push(JSON.parse(init!.body as string));
        return fetch(input, init);
      },
    });
    const cities: string[] = [];
    const getWeather = agentTool({
      name: "get_weather",
      description: WEATHER.description,
      parameters: WEATHER.parameters as never,
      strict: false,
      execute: (input) => {
        cities.push((input as { city: string }).city);
        return "sunny";
      },
    });
    const agent = new Agent({
      name: "weather",
      instructions: "answer weather",
      tools: [getWeather],
      model: new OpenAIChatCompletionsModel(client, id),
      modelSettings: {
        toolChoice: "required",
        maxTokens: 80,
        providerData: { logit_bias: STOP_BIAS },
      },
      toolUseBehavior: "stop_on_first_tool",
    });
    const plain = await run(agent, "weather in rome", { maxTurns: 2 });
    assertEquals(plain.finalOutput, "sunny");
    const streamed = await run(agent, "weather in paris", { maxTurns: 2, stream: true });
    for await (const _ of streamed) { /* drain the events */ }
    assertEquals(streamed.finalOutput, "sunny");
    assertEquals(cities.every((c) => c === "paris" || c === "rome"), true);
    assertEquals(cities.length, 2);
    assertEquals(sent.map((b) => [b.stream, (b.messages as { role: string }[])[0].role]), [
      [false, "system"],
      [true, "system"],
    ]);
  });
});
