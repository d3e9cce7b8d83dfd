/**
 * SFT rows with tools in Trinity's layout (`messages` and `tools` as JSON text, tool results as
 * objects, call arguments as objects, an assistant turn with calls and no content): the chat is
 * rendered with its tools, the last assistant turn (a tool call, or the answer after tool
 * results) is trained up to its end token, and the token ids equal transformers.js's
 * `apply_chat_template(messages, {tools})` up to that token. Rows are not skipped.
 */

import { datasetSource } from "../../src/buffer/dataset_source.ts";
import { normalizeMessages } from "../../src/model/chat_template.ts";
import { assertEquals } from "../_asserts.ts";
import { inTempDir } from "../_temp_dir.ts";
import { localModelId, transformers } from "../export/_transformers_js.ts";
import { loadQwenTokenizer, qwenTokenizerDir } from "../tool_calls/_qwen.ts";

const TOOLS = [{
  type: "function",
  function: {
    name: "get_weather",
    description: "Weather of a city",
    parameters: {
      type: "object",
      properties: { city: { type: "string" }, unit: { enum: ["celsius", "fahrenheit"] } },
      required: ["city"],
    },
  },
}];

const CALL = [{
  id: "call_1",
  type: "function",
  function: { name: "get_weather", arguments: { city: "Oslo", unit: "celsius" } },
}];
const ASK = [
  { role: "system", content: "Use tools when needed." },
  { role: "user", content: "Weather in Oslo?" },
];
/** A row whose last turn is a call, and one whose last turn answers after the tool result. */
const CHATS = [
  [...ASK, { role: "assistant", tool_calls: CALL }],
  [...ASK, { role: "assistant", content: "Checking.", tool_calls: CALL }, {
    role: "tool",
    tool_call_id: "call_1",
    content: { temp: 3, sky: "snow" },
  }, { role: "assistant", content: "3 °C and snow." }],
];

Deno.test("sft rows with tools: rendered with their tools, trained on the last turn, ids as transformers.js", async () => {
  await inTempDir("rft-sft-tools-", async (dir) => {
    const rows = CHATS.map((messages) =>
      JSON.stringify({ messages: JSON.stringify(messages), tools: JSON.stringify(TOOLS) })
    );
    await Deno.writeTextFile(`${dir}/sft.jsonl`, rows.join("\n") + "\n");
    const tokenizer = await loadQwenTokenizer();
    const log: string[] = [];
    const source = await datasetSource(
      {
        path: `${dir}/sft.jsonl`,
        split: "train",
        format: {
          promptType: "messages",
          messagesKey: "messages",
          promptKey: "prompt",
          responseKey: "response",
          toolsKey: "tools",
        },
      },
      {
        algorithm: "sft",
        tokenizer,
        maxTokens: 2048,
        totalEpochs: 1,
        seed: 1,
        log: (l) => log.push(l),
      },
    );
    const batch = (await source.next(2, { policyVersion: 0 }))!;
    assertEquals([batch.batch.length, batch.skipped ?? 0, log], [2, 0, []]);
    const reference = await transformers.AutoTokenizer.from_pretrained(
      localModelId(qwenTokenizerDir()),
    );
    const byLength = [...batch.batch].sort((a, b) => a.tokens.length - b.tokens.length);
    for (const [i, exp] of byLength.entries()) {
      // transformers.js gets the row's messages as Trinity hands them to transformers (call
      // arguments as objects), tool results as text and null content as "".
      const messages = normalizeMessages(CHATS[i] as never);
      const ids = reference.apply_chat_template(messages, {
        tools: TOOLS,
        tokenize: true,
        return_dict: false,
        return_tensor: false,
      }) as number[];
      const end = ids.lastIndexOf(tokenizer.eosId!);
      assertEquals(exp.tokens, ids.slice(0, end + 1));
      const response = exp.tokens.slice(exp.promptLength);
      assertEquals(exp.actionMask, exp.tokens.map((_, t) => (t >= exp.promptLength ? 1 : 0)));
      assertEquals(response.at(-1), tokenizer.eosId);
      assertEquals(
        tokenizer.decode(exp.tokens.slice(0, exp.promptLength)).includes(
          '<tools>\n{"type": "function", "function": {"name": "get_weather"',
        ),
        true,
      );
    }
    assertEquals(
      byLength[0].responseText,
      '<think>\n\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo", "unit": "celsius"}}\n</tool_call>',
    );
    assertEquals(byLength[1].responseText, "<think>\n\n</think>\n\n3 °C and snow.");
    const prompt = tokenizer.decode(byLength[1].tokens.slice(0, byLength[1].promptLength));
    assertEquals(
      prompt.includes('<tool_response>\n{"temp": 3, "sky": "snow"}\n</tool_response>'),
      true,
      prompt,
    );
  });
});
