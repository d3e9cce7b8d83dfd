/**
 * Function calling end to end on the real Qwen tokenizer: a tiny Qwen2-architecture model is
 * fine-tuned by `./rft run` (SFT on chat rows with `tools`: a call for Paris, a mistyped call for
 * Rome, the answer after a tool result), then served by `./rft serve` and asked through the
 * official `openai` client. The Paris reply is a parsed `get_weather` call with the right
 * arguments and `finish_reason: "tool_calls"`; its streamed deltas reassemble to the same call;
 * the conversation sent back with the tool result is prompted with exactly the token ids
 * transformers.js's `apply_chat_template(messages, {tools})` gives; the Rome reply's malformed
 * call comes back as text (a 200, never a 500) and is counted in /metrics.
 */

import OpenAI from "openai";
import { assertEquals } from "../_asserts.ts";
import { inTempDir } from "../_temp_dir.ts";
import { localModelId, transformers } from "../export/_transformers_js.ts";
import { qwenTokenizerDir, writeTinyQwen } from "../tool_calls/_qwen.ts";

const LAUNCHER = new URL("../../rft", import.meta.url).pathname;
/** SFT steps (each sees every row: the batch is the whole dataset). */
const STEPS = 80;

const TOOLS: OpenAI.ChatCompletionFunctionTool[] = [{
  type: "function",
  function: {
    name: "get_weather",
    description: "Weather of a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
}];
const ask = (city: string): OpenAI.ChatCompletionMessageParam => ({
  role: "user",
  content: `Weather in ${city}?`,
});
const CALL = {
  id: "call_1",
  type: "function",
  function: { name: "get_weather", arguments: { city: "Paris" } },
};
/** A call written as Python, not JSON: the server leaves it as text. */
const MALFORMED = '<tool_call>\nget_weather(city="Rome")\n</tool_call>';
const ROWS = [
  [ask("Paris"), { role: "assistant", content: "", tool_calls: [CALL] }],
  [ask("Rome"), { role: "assistant", content: MALFORMED }],
  [
    ask("Paris"),
    { role: "assistant", content: "", tool_calls: [CALL] },
    { role: "tool", tool_call_id: "call_1", content: "sunny" },
    { role: "assistant", content: "Sunny." },
  ],
];

/** Fine-tunes the tiny model on ROWS with `./rft run`; returns the checkpoint directory. */
async function fineTune(dir: string): Promise<string> {
  await writeTinyQwen(`${dir}/model`, { hidden: 64, layers: 2 }, false);
  const rows = ROWS.map((messages) => JSON.stringify({ messages, tools: TOOLS }));
  await Deno.writeTextFile(`${dir}/sft.jsonl`, rows.join("\n") + "\n");
  await Deno.writeTextFile(
    `${dir}/sft.yaml`,
    `project: tools
name: sft
checkpoint_root_dir: ${dir}/ckpt
mode: train
model: { model_path: ${dir}/model, from_scratch: true, max_prompt_tokens: 384, max_response_tokens: 64 }
algorithm:
  algorithm_type: sft
  optimizer: { lr: 0.005, weight_decay: 0.0 }
buffer:
  total_steps: ${STEPS}
  total_epochs: ${STEPS}
  train_batch_size: ${ROWS.length}
  trainer_input:
    sft_warmup_dataset:
      path: ${dir}/sft.jsonl
      format: { messages_key: messages, tools_key: tools }
trainer: { save_interval: ${STEPS} }
monitor: { console: false, tensorboard: false }
`,
  );
  const out = await new Deno.Command(LAUNCHER, {
    args: ["run", `${dir}/sft.yaml`],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assertEquals(out.code, 0, stderr);
  return `${dir}/ckpt/tools/sft/checkpoints/step_${STEPS}`;
}

/** Starts `./rft serve` on `model`; resolves with its base URL and a stop function. */
async function serve(model: string) {
  const child = new Deno.Command(LAUNCHER, {
    args: [
      ...["serve", "--model", model, "--name", "qwen-tools", "--port", "0"],
      ...["--max-prompt-tokens", "384", "--max-tokens", "64"],
    ],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const lines = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!/serving .* at (http:\/\/\S+\/v1)/.test(seen)) {
    const { value, done } = await lines.read();
    if (done) throw new Error(`rft serve ended: ${seen}`);
    seen += value;
  }
  lines.releaseLock();
  child.stderr.cancel().catch(() => {});
  const url = /serving .* at (http:\/\/\S+\/v1)/.exec(seen)![1];
  const stop = async () => {
    child.kill("SIGINT");
    await child.status;
  };
  return { url, stop };
}

Deno.test("a Qwen-tokenizer model fine-tuned by rft run calls its tool through rft serve", async () => {
  await inTempDir("rft-qwen-tools-", async (dir) => {
    const { url, stop } = await serve(await fineTune(dir));
    try {
      const openai = new OpenAI({ baseURL: url, apiKey: "none", maxRetries: 0 });
      const request = {
        model: "qwen-tools",
        messages: [ask("Paris")],
        tools: TOOLS,
        temperature: 0,
      };
      const reply = await openai.chat.completions.create(request);
      const [choice] = reply.choices;
      assertEquals(choice.finish_reason, "tool_calls", JSON.stringify(choice.message));
      const [call] = choice.message.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[];
      assertEquals([call.function.name, JSON.parse(call.function.arguments)], [
        "get_weather",
        { city: "Paris" },
      ]);

      const stream = await openai.chat.completions.create({ ...request, stream: true });
      const streamed = { name: "", arguments: "" };
      for await (const chunk of stream) {
        for (const delta of chunk.choices[0].delta.tool_calls ?? []) {
          streamed.name += delta.function?.name ?? "";
          streamed.arguments += delta.function?.arguments ?? "";
        }
      }
      assertEquals(streamed, { name: call.function.name, arguments: call.function.arguments });

      const messages: OpenAI.ChatCompletionMessageParam[] = [
        ask("Paris"),
        choice.message,
        { role: "tool", tool_call_id: call.id, content: "sunny" },
      ];
      const answer = await openai.chat.completions.create({
        model: "qwen-tools",
        messages,
        tools: TOOLS,
        temperature: 0,
        // @ts-expect-error: vLLM's extension, not in the client's types
        return_token_ids: true,
      });
      const reference = await transformers.AutoTokenizer.from_pretrained(
        localModelId(qwenTokenizerDir()),
      );
      const clientMessages = messages.map((m) => ({ ...m, content: m.content ?? "" }));
      const expected = reference.apply_chat_template(clientMessages, {
        tools: TOOLS,
        add_generation_prompt: true,
        tokenize: true,
        return_dict: false,
        return_tensor: false,
      });
      const promptIds = (answer as unknown as { prompt_token_ids: number[] }).prompt_token_ids;
      assertEquals(promptIds, expected);
      assertEquals(answer.choices[0].message.content, "<think>\n\n</think>\n\nSunny.");

      const rome = await openai.chat.completions.create({ ...request, messages: [ask("Rome")] });
      assertEquals(rome.choices[0].finish_reason, "stop");
      assertEquals(rome.choices[0].message.tool_calls, undefined);
      assertEquals(rome.choices[0].message.content, `<think>\n\n</think>\n\n${MALFORMED}`);
      const metrics = await (await fetch(url.replace(/\/v1$/, "/metrics"))).text();
      assertEquals(
        metrics.includes('rft_malformed_tool_calls_total{model="qwen-tools"} 1'),
        true,
        metrics,
      );
    } finally {
      await stop();
    }
  });
});
