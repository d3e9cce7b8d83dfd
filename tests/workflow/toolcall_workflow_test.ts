/**
 * Trinity's `toolcall_workflow` and its reward on ToolACE-shaped rows (`raw_system`, `tools` as
 * JSON text, `conversations` of `{from, value}`, `answer` as JSON text): the chat is built as
 * Trinity builds it (tools one JSON a line with non-ASCII escaped, recorded calls and
 * observations as turns), replies are scored by Tool-N1's rules (think once, before the call;
 * the calls equal the answer's), and Trinity's grpo_toolcall config runs unchanged with `./rft
 * run` on such rows, given a tiny Qwen-tokenizer model.
 */

import { assertEquals } from "../_asserts.ts";
import { readMetrics } from "../../src/monitor/metrics_log.ts";
import { createWorkflow } from "../../src/workflow/mod.ts";
import { toolcallScore } from "../../src/workflow/rewards/toolcall.ts";
import { inTempDir } from "../_temp_dir.ts";
import { loadQwenTokenizer, writeTinyQwen } from "../tool_calls/_qwen.ts";
import { makeTask, ScriptedModel } from "./_scripted_model.ts";

const LAUNCHER = new URL("../../rft", import.meta.url).pathname;
const CONFIG = new URL("./trinity_configs/toolace.yaml", import.meta.url).pathname;

/** ToolACE's system text before the tools (as Trinity's script keeps it). */
const RAW_SYSTEM =
  "You are an expert in composing functions. You are given a question and a set of possible functions. \nBased on the question, you will need to make one or more function/tool calls to achieve the purpose. Here is a list of functions in JSON format that you can invoke:\n";

/** A ToolACE-shaped row asking for `calls` after `conversations`. */
function toolaceRow(conversations: { from: string; value: string }[], calls: unknown[]) {
  const tools = [
    {
      name: "Weather.get",
      description: "Current weather of a city",
      parameters: { type: "dict", properties: { city: { type: "string" } }, required: ["city"] },
    },
    { name: "Clock.now", description: "The time", parameters: { type: "dict", properties: {} } },
  ];
  return {
    raw_system: RAW_SYSTEM,
    tools: JSON.stringify(tools),
    conversations,
    answer: JSON.stringify(calls),
  };
}

const ZURICH = { name: "Weather.get", arguments: { city: "Zürich" } };
const ROW = toolaceRow(
  [
    { from: "user", value: "What time is it?" },
    { from: "function_call", value: '[{"name": "Clock.now", "arguments": {}}]' },
    { from: "observation", value: '{"time": "12:00"}' },
    { from: "assistant", value: "It is noon." },
    { from: "user", value: "And the weather in Zürich?" },
  ],
  [ZURICH],
);

Deno.test("toolcall_workflow: Trinity's prompt, Tool-N1's reward on each reply", async () => {
  const think = "<think>I need the weather.</think>";
  const call = (calls: unknown) => `<tool_call>${JSON.stringify(calls)}</tool_call>`;
  const replies: [string, number][] = [
    [`${think}\n${call([ZURICH])}`, 1],
    [`${think}${call(ZURICH)}`, 1], // one call, not in a list
    [call([ZURICH]), 0], // no thinking
    [`${think}${think}${call([ZURICH])}`, 0], // thinks twice
    [`${call([ZURICH])}${think}`, 0], // thinks after calling
    [`${think}${call([{ ...ZURICH, arguments: { city: "Bern" } }])}`, 0],
    [`${think}${call([ZURICH, ZURICH])}`, 0],
    [`${think}<tool_call>[{"name": "Weather.get"}]</tool_call>`, 0], // no arguments
  ];
  const tokenizer = await loadQwenTokenizer();
  const model = new ScriptedModel(replies.map(([r]) => r), tokenizer);
  const task = makeTask(ROW, { workflow: "toolcall_workflow", rolloutArgs: { n: replies.length } });
  const experiences = await createWorkflow(task, { model }).run();
  assertEquals(experiences.map((e) => e.reward), replies.map(([, r]) => r));
  const prompt = tokenizer.decode(model.calls[0].promptTokens);
  const tool =
    '{"type": "function", "function": {"name": "Weather.get", "description": "Current weather of a city", "parameters": {"type": "dict", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}';
  const parts = [
    `<|im_start|>system\n${RAW_SYSTEM}# Tool\n\n<tools>\n${tool}\n{"type": "function", "function": {"name": "Clock.now"`,
    '<|im_start|>assistant\n"[{\\"name\\": \\"Clock.now\\", \\"arguments\\": {}}]"<|im_end|>',
    '<|im_start|>user\n<tool_response>\n{"time": "12:00"}\n</tool_response><|im_end|>',
    "<|im_start|>user\nAnd the weather in Zürich?<|im_end|>\n<|im_start|>assistant\n",
  ];
  for (const part of parts) assertEquals(prompt.includes(part), true, part);
  assertEquals(toolcallScore(`${think}<tool_call>[]</tool_call>`, "[]"), 1);
});

Deno.test("Trinity's grpo_toolcall config runs unchanged on ToolACE-shaped rows", async () => {
  await inTempDir("rft-toolace-", async (dir) => {
    await writeTinyQwen(`${dir}/model`);
    const data = `${dir}/examples/grpo_toolcall/toolace_data`;
    await Deno.mkdir(data, { recursive: true });
    const rows = [
      ROW,
      toolaceRow([{ from: "user", value: "Time?" }], [{ name: "Clock.now", arguments: {} }]),
    ];
    // Trinity's script writes one JSON file; rft reads the split file of the directory.
    await Deno.writeTextFile(
      `${data}/train.jsonl`,
      rows.map((r) => JSON.stringify(r)).join("\n") + "\n",
    );
    const sets = [
      // Trinity reads the path from its working directory; rft from the config's directory.
      `buffer.explorer_input.taskset.path=${data}`,
      "buffer.batch_size=2",
      "buffer.total_steps=1",
      "algorithm.repeat_times=2",
      "model.max_response_tokens=6",
      "monitor.console=false",
    ];
    const out = await new Deno.Command(LAUNCHER, {
      args: ["run", CONFIG, ...sets.flatMap((s) => ["--set", s])],
      cwd: dir,
      env: { TRINITY_MODEL_PATH: `${dir}/model`, TRINITY_CHECKPOINT_ROOT_DIR: `${dir}/ckpt` },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assertEquals(out.code, 0, stderr);
    const run = `${dir}/ckpt/Trinity-RFT-toolace/qwen2.5-7B-toolace`;
    const { rows: metrics } = await readMetrics(`${run}/metrics.jsonl`);
    const explored = metrics.find((r) => "rollout/count" in r)!;
    assertEquals(explored["rollout/count"], 4);
    assertEquals(Number.isFinite(explored["rollout/reward_mean"]), true);
    const trained = metrics.find((r) => "actor/loss" in r)!;
    assertEquals(Number.isFinite(trained["actor/loss"]), true);
  });
});
