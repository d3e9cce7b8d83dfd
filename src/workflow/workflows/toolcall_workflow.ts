/**
 * `toolcall_workflow` (Trinity's `ToolCallWorkflow`, its `grpo_toolcall` example on ToolACE,
 * after Tool-N1): rows in Trinity's ToolACE layout (`raw_system`, `tools` as JSON text of
 * function schemas, `conversations` of `{from, value}` turns, `answer` as JSON text of the
 * expected calls) become a chat whose system turn lists the tools in a `<tools>` block and asks
 * for `<think>...</think>` then `<tool_call>[...]</tool_call>`, exactly as Trinity writes it;
 * replies are scored by `toolcall_reward` unless the taskset names another reward fn.
 */

import type { Task } from "../../buffer/task.ts";
import { type ChatMessage, pythonJson } from "../../model/chat_template.ts";
import { InputError } from "../../util/input_error.ts";
import type { WorkflowFactory } from "../workflow.ts";
import { singleTurnWorkflow } from "./single_turn.ts";

/** Trinity's (Tool-N1's) tool prompt, after the row's `raw_system`; `{tools}`: one tool a line. */
export const TOOLCALL_PROMPT = `# Tool

<tools>
{tools}
</tools>

In each action step, you MUST:
1. Think about the reasoning process in the mind and enclosed your reasoning within <think> </think> XML tags.
2. Then, provide a json object with function names and arguments within <tool_call></tool_call> XML tags. i.e., <tool_call>[{"name": <function-name>, "arguments": <args-json-object>}, {"name": <function-name2>, "arguments": <args-json-object2>}, ...]</tool_call>
3. Make sure both the reasoning and the tool call steps are included together in one single reply.
A complete reply example is: <think>To address the query, I need to send the email to Bob and then buy the banana through walmart. </think> <tool_call> [{"name": "email", "arguments": {"receiver": "Bob", "content": "I will bug banana through walmart"}}, {"name": "walmart", "arguments": {"input": "banana"}}]</tool_call>. Please make sure the type of the arguments is correct.
`;

/** Chat roles of ToolACE's `from` values (others are dropped, as Trinity drops them). */
const ROLES: Readonly<Record<string, string>> = {
  human: "user",
  user: "user",
  gpt: "assistant",
  assistant: "assistant",
  observation: "tool",
  tool: "tool",
  function_call: "assistant",
};

/** `rawTask[key]`, which must pass `ok` (`expected` says what it must be). */
function rowField(task: Task, key: string, expected: string, ok: (v: unknown) => boolean): unknown {
  const value = task.rawTask[key];
  if (!ok(value)) {
    throw new InputError(
      `Task "${task.taskId}" has "${key}" = ${
        JSON.stringify(value)?.slice(0, 60)
      }; expected ${expected}`,
    );
  }
  return value;
}

/** Trinity's `construct_prompt`: the system turn with the tools, then the conversation. */
export function toolcallMessages(task: Task): ChatMessage[] {
  const toolsText = rowField(task, "tools", "JSON text of a list of functions", (v) => {
    try {
      return typeof v === "string" && Array.isArray(JSON.parse(v));
    } catch {
      return false;
    }
  }) as string;
  const tools = (JSON.parse(toolsText) as unknown[])
    .map((tool) => pythonJson({ type: "function", function: tool }, { ensureAscii: true }))
    .join("\n");
  const system = rowField(task, "raw_system", "a string", (v) => typeof v === "string") as string;
  const turns = rowField(
    task,
    "conversations",
    'a list of {"from", "value"} turns',
    (v) => Array.isArray(v) && v.every((t) => typeof t?.from === "string"),
  ) as { from: string; value: unknown }[];
  const messages: ChatMessage[] = [
    { role: "system", content: system + TOOLCALL_PROMPT.replace("{tools}", tools) },
  ];
  for (const { from, value } of turns) {
    const role = ROLES[from];
    if (role === undefined) continue;
    // A recorded call is written as its JSON (Trinity's `json.dumps(value)`).
    const content = from === "function_call"
      ? pythonJson(value, { ensureAscii: true })
      : String(value);
    messages.push({ role, content });
  }
  return messages;
}

/** No args; reward `toolcall_reward` by default; rows are checked in ToolACE's layout. */
export const toolcallWorkflow: WorkflowFactory = {
  ...singleTurnWorkflow({
    description: "ToolACE tool calls: think, then <tool_call>[...]</tool_call> (toolcall_reward)",
    defaultArgs: {},
    useChat: () => true,
    defaultRewardFn: "toolcall_reward",
    messages: (task) => toolcallMessages(task),
    text: (task) => toolcallMessages(task).map((m) => m.content).join("\n"),
  }),
  rowProblem(row) {
    try {
      toolcallMessages({ taskId: "row", rawTask: row } as Task);
      if (row.answer === undefined) return 'it has no "answer" (the expected tool calls)';
    } catch (err) {
      return (err as Error).message;
    }
  },
};
