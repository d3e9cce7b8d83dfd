/**
 * LangChain (`@langchain/openai`'s ChatOpenAI, offline) against the server: `bindTools` gets
 * tool calls back as LangChain tool calls, their results go back as ToolMessages and the model
 * answers; `withStructuredOutput` returns objects of the schema with each of its methods (JSON
 * schema, function calling, JSON mode).
 */

import { ChatOpenAI } from "@langchain/openai";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { assertEquals } from "../_asserts.ts";
import { jsonSchemaProblems } from "../../src/constrained/json_schema_check.ts";
import { withServer } from "./_tiny_server.ts";
import { STOP_BIAS, TOOL_SETUP, TOOL_TOKENIZER, TOOLS } from "./_tool_server.ts";

/** LangChain's chat model over the server's model `id`, with `bias` added to STOP_BIAS. */
const chatModel = (url: string, id: string, bias: Record<string, number> = {}) =>
  new ChatOpenAI({
    model: id,
    apiKey: "none",
    configuration: { baseURL: `${url}/v1` },
    maxRetries: 0,
    temperature: 1,
    modelKwargs: { logit_bias: { ...STOP_BIAS, ...bias }, seed: 3 },
  });

Deno.test("LangChain bindTools: tool calls out, tool results back in, an answer", async () => {
  await withServer(TOOL_SETUP, async ({ server, id }) => {
    const model = chatModel(server.url, id).bindTools(TOOLS, { tool_choice: "required" });
    const question = new HumanMessage("weather in rome");
    const reply = await model.invoke([question]);
    assertEquals(reply.tool_calls!.length >= 1, true);
    for (const call of reply.tool_calls!) {
      const tool = TOOLS.find((t) => t.function.name === call.name)!;
      assertEquals(jsonSchemaProblems(call.args, tool.function.parameters), []);
      assertEquals(call.id!.startsWith("call_"), true);
    }
    assertEquals(reply.response_metadata.finish_reason, "tool_calls");
    const results = reply.tool_calls!.map((c) =>
      new ToolMessage({ tool_call_id: c.id!, content: "sunny" })
    );
    const answer = await chatModel(server.url, id).bindTools(TOOLS, { tool_choice: "none" })
      .invoke([question, reply, ...results]);
    assertEquals(answer instanceof AIMessage, true);
    assertEquals(answer.tool_calls, []);
    assertEquals(typeof answer.content, "string");
  });
});

Deno.test("LangChain withStructuredOutput: JSON schema, function calling and JSON mode", async () => {
  await withServer(TOOL_SETUP, async ({ server, id }) => {
    const schema = {
      title: "mood",
      type: "object",
      properties: { mood: { enum: ["ok", "bad"] }, sure: { type: "boolean" } },
      required: ["mood", "sure"],
      additionalProperties: false,
    };
    for (const method of ["jsonSchema", "functionCalling"] as const) {
      const structured = chatModel(server.url, id).withStructuredOutput(schema, {
        method,
        name: "mood",
      });
      const value = await structured.invoke("how are you");
      assertEquals(jsonSchemaProblems(value, schema), [], `${method}: ${JSON.stringify(value)}`);
    }
    // The tiny model writes long keys in free JSON; a bias towards "}" keeps the object short.
    const close = { [String(TOOL_TOKENIZER.tokenToId("}"))]: 6 };
    const json = chatModel(server.url, id, close).withStructuredOutput(schema, {
      method: "jsonMode",
    });
    const value = await json.invoke("how are you, in json");
    assertEquals(typeof value === "object" && value !== null && !Array.isArray(value), true);
  });
});
