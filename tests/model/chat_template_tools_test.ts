/**
 * Chat templates with tools, on the real Qwen tokenizer: the `<tools>` block, assistant tool
 * calls (arguments as JSON text or as an object render the same), tool results grouped into one
 * user turn, compared text and token ids with transformers.js's `apply_chat_template(messages,
 * {tools})`; the text after an assistant turn (`assistantTurnEnd`); token bytes.
 */

import { assertEquals, assertThrows } from "../_asserts.ts";
import {
  assistantTurnEnd,
  type ChatMessage,
  normalizeMessages,
  pythonJson,
  type ToolDefinition,
} from "../../src/model/chat_template.ts";
import { CharTokenizer } from "../../src/model/char_tokenizer.ts";
import { localModelId, transformers } from "../export/_transformers_js.ts";
import { loadQwenTokenizer, qwenTokenizerDir } from "../tool_calls/_qwen.ts";

const TOOLS: ToolDefinition[] = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Weather of a city, °C",
      parameters: {
        type: "object",
        properties: { city: { type: "string" } },
        required: ["city"],
      },
    },
  },
  { type: "function", function: { name: "get_time", parameters: { type: "object" } } },
];

/** A conversation with two parallel calls, their results, and a final answer. */
function conversation(args: (o: Record<string, unknown>) => unknown): ChatMessage[] {
  return [
    { role: "system", content: "Be brief." },
    { role: "user", content: "Weather and time in Zürich?" },
    {
      role: "assistant",
      content: null as unknown as string,
      tool_calls: [
        {
          id: "call_a",
          type: "function",
          function: { name: "get_weather", arguments: args({ city: "Zürich" }) as string },
        },
        {
          id: "call_b",
          type: "function",
          function: { name: "get_time", arguments: args({}) as string },
        },
      ],
    },
    { role: "tool", tool_call_id: "call_a", content: "21 °C" },
    { role: "tool", tool_call_id: "call_b", content: "12:00" },
    { role: "assistant", content: "21 °C at noon." },
    { role: "user", content: "Thanks!" },
  ];
}

Deno.test("Qwen's template with tools renders as transformers.js renders it, text and ids", async () => {
  const ours = await loadQwenTokenizer();
  const reference = await transformers.AutoTokenizer.from_pretrained(
    localModelId(qwenTokenizerDir()),
  );
  const asObjects = conversation((o) => o);
  const asText = conversation((o) => pythonJson(o));
  const text = ours.applyChatTemplate(asText, { tools: TOOLS, addGenerationPrompt: true });
  // transformers.js gets the client's messages (arguments as text, null content as "").
  const clientMessages = asText.map((m) => ({ ...m, content: m.content ?? "" }));
  const expected = reference.apply_chat_template(clientMessages, {
    tools: TOOLS,
    tokenize: false,
    add_generation_prompt: true,
  }) as string;
  assertEquals(text, expected);
  assertEquals(
    ours.applyChatTemplate(asObjects, { tools: TOOLS, addGenerationPrompt: true }),
    text,
  );
  const ids = reference.apply_chat_template(clientMessages, {
    tools: TOOLS,
    tokenize: true,
    add_generation_prompt: true,
    return_tensor: false,
    return_dict: false,
  }) as number[];
  assertEquals(ours.encode(text), ids);
  for (
    const part of [
      '<tools>\n{"type": "function"',
      '{"name": "get_time", "arguments": {}}',
      "<|im_start|>user\n<tool_response>\n21 °C\n</tool_response>\n<tool_response>\n12:00\n</tool_response><|im_end|>",
    ]
  ) {
    assertEquals(text.includes(part), true, part);
  }
});

Deno.test("assistantTurnEnd: the text after a turn, never the turn itself", async () => {
  const qwen = await loadQwenTokenizer();
  const render = qwen.applyChatTemplate.bind(qwen);
  const history: ChatMessage[] = conversation((o) => o).slice(0, 3);
  const after = assistantTurnEnd(render, history, [{ role: "tool", content: "21 °C" }], {
    tools: TOOLS,
  });
  assertEquals(
    after,
    "<|im_end|>\n<|im_start|>user\n<tool_response>\n21 °C\n</tool_response><|im_end|>\n<|im_start|>assistant\n",
  );
  const char = CharTokenizer.fromText("abc?=");
  const charRender = char.applyChatTemplate.bind(char);
  assertEquals(
    assistantTurnEnd(charRender, [{ role: "user", content: "a" }, {
      role: "assistant",
      content: "b",
    }], [{ role: "user", content: "=c" }]),
    "<eos>=c<eos>",
  );
});

Deno.test("normalisation: bad arguments name the message; reserved variables are refused", async () => {
  const qwen = await loadQwenTokenizer();
  const bad = conversation(() => "{city: Zürich}");
  assertThrows(() => normalizeMessages(bad), Error, "messages[2].tool_calls[0].function.arguments");
  assertThrows(
    () => qwen.applyChatTemplate([{ role: "user", content: "x" }], { variables: { messages: [] } }),
    Error,
    '"messages" is set by the renderer',
  );
  const thinking = qwen.applyChatTemplate([{ role: "user", content: "x" }], {
    addGenerationPrompt: true,
    variables: { enable_thinking: false },
  });
  assertEquals(thinking.endsWith("<|im_start|>assistant\n<think>\n\n</think>\n\n"), true);
  assertEquals(
    normalizeMessages([{ role: "tool", content: { t: 22, s: "ok" } as unknown as string }])[0]
      .content,
    '{"t": 22, "s": "ok"}',
  );
});

Deno.test("token bytes: Qwen's byte-level tokens add up to the UTF-8 text; specials add none", async () => {
  const qwen = await loadQwenTokenizer();
  const bytes = qwen.tokenBytes();
  const text = 'Zürich 你好 <tool_call>\n{"a": 1}';
  const ids = qwen.encode(text);
  const joined = ids.flatMap((id) => [...bytes[id]!]);
  assertEquals(joined, [...new TextEncoder().encode(text)]);
  assertEquals(bytes[qwen.eosId!], null);
  assertEquals(bytes.length, qwen.vocabSize);
  const char = new CharTokenizer("ab", ["<pad>", "<bos>", "<eos>", "<tool_call>"]);
  assertEquals(char.tokenBytes().map((b) => b && new TextDecoder().decode(b)), [
    null,
    null,
    null,
    "<tool_call>",
    "a",
    "b",
  ]);
});
