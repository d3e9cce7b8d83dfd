/**
 * The Task: one draw of a row from a taskset, with what a workflow needs to run it (Trinity's
 * fields: workflow and reward fn names, the raw row, format, rollout and workflow args), and
 * the helpers that read the prompt, the messages and the answer out of the raw row as the
 * format args say. Reads no files (see `taskset.ts`) and runs nothing.
 */

import type { GenerateOptions } from "../engine/engine.ts";
import type { ChatMessage } from "../model/chat_template.ts";
import { InputError } from "../util/input_error.ts";

/** Where a row keeps its parts (YAML `format`: `prompt_key`, `response_key`, ...). */
export interface TaskFormat {
  /** Key of the prompt text (`prompt_key`; default "prompt"). */
  promptKey: string;
  /** Key of the reference answer (`response_key`); absent when rows have none. */
  responseKey?: string;
  /** A system message put before the prompt (`system_prompt`). */
  systemPrompt?: string;
  /** Key of a ready chat, an array of `{role, content}` (`messages_key`); wins over the prompt. */
  messagesKey?: string;
}

/** How to sample a task (YAML `rollout_args`): `n` rollouts per task, and the engine's knobs. */
export type RolloutArgs =
  & Pick<GenerateOptions, "temperature" | "topK" | "topP" | "maxTokens">
  & { n: number };

/** One draw of a taskset row: what a workflow gets. */
export interface Task {
  /** Unique per draw, `${epoch}.${position in the epoch}`: the group id of its rollouts. */
  taskId: string;
  /** The row's index in the taskset (the same on every draw of the row). */
  index: number;
  /** The epoch of this draw (0-based). */
  epoch: number;
  /** Registered name of the workflow that runs it. */
  workflow: string;
  /** Registered name of the reward fn; absent when the workflow computes its own. */
  rewardFn?: string;
  /** The row as read (shared by every draw of the row; do not modify). */
  rawTask: Readonly<Record<string, unknown>>;
  formatArgs: Readonly<TaskFormat>;
  rolloutArgs: Readonly<RolloutArgs>;
  /** Free-form args of the taskset for its workflow (YAML `workflow_args`). */
  workflowArgs: Readonly<Record<string, unknown>>;
  /** True for a task of an evaluation taskset. */
  isEval: boolean;
}

/** What the row helpers read: a task, or a row with its format. */
export type TaskRow = Pick<Task, "rawTask" | "formatArgs"> & { taskId?: string };

/**
 * The prompt text of `task` (`rawTask[promptKey]`); when the prompt is a list of chat turns,
 * the content of its last user turn.
 */
export function taskPrompt(task: TaskRow): string {
  const prompt = field(task, task.formatArgs.promptKey, "prompt_key") as string | ChatMessage[];
  if (typeof prompt === "string") return prompt;
  return prompt.findLast((m) => m.role === "user")?.content ?? prompt.at(-1)!.content;
}

/**
 * The chat of `task`: `rawTask[messagesKey]` when `messagesKey` is set, else the prompt: its
 * chat turns when it is a list of them, else one user message. A `systemPrompt` comes first,
 * unless the chat already opens with a system turn.
 */
export function taskMessages(task: TaskRow): ChatMessage[] {
  const { messagesKey, promptKey, systemPrompt } = task.formatArgs;
  const prompt = messagesKey === undefined ? field(task, promptKey, "prompt_key") : undefined;
  const chat: ChatMessage[] = messagesKey !== undefined
    ? field(task, messagesKey, "messages_key", parseJsonText) as ChatMessage[]
    : typeof prompt === "string"
    ? [{ role: "user", content: prompt }]
    : prompt as ChatMessage[];
  if (systemPrompt === undefined || chat[0].role === "system") return chat;
  return [{ role: "system", content: systemPrompt }, ...chat];
}

/** The reference answer of `task` (`rawTask[responseKey]`; a number is turned into text). */
export function taskAnswer(task: TaskRow): string {
  const { responseKey } = task.formatArgs;
  if (responseKey === undefined) {
    throw new InputError(`${label(task)} has no answer: format "response_key" is not set`);
  }
  return String(field(task, responseKey, "response_key"));
}

/**
 * Why `row` cannot make a task under `format` (not an object, or its prompt, messages or
 * answer is missing or of the wrong type), or undefined when it can.
 */
export function rowProblem(row: unknown, format: TaskFormat): string | undefined {
  if (typeof row !== "object" || row === null || Array.isArray(row)) {
    return `row is ${JSON.stringify(row)}; expected a JSON object`;
  }
  const task = { rawTask: row as Record<string, unknown>, formatArgs: format };
  try {
    taskMessages(task);
    if (format.responseKey !== undefined) taskAnswer(task);
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * Why `tokenizer` cannot encode the prompt of `row` (its prompt or chat text), or undefined
 * when it can: a row whose prompt the tokenizer rejects is skipped at load, not failed at run.
 */
export function promptEncodingProblem(
  row: TaskRow,
  tokenizer: { encode(text: string): unknown },
): string | undefined {
  try {
    for (const message of taskMessages(row)) {
      if (typeof message.content === "string") tokenizer.encode(message.content);
    }
  } catch (err) {
    return `the tokenizer cannot encode its prompt: ${(err as Error).message}`;
  }
}

/** What each format key's value must be: a description and a check. */
const EXPECTED = {
  prompt_key: [
    "a string or a non-empty array of {role, content} strings",
    (v: unknown) => typeof v === "string" || isChat(v),
  ],
  response_key: ["a string or number", (v: unknown) => typeof v === "string" || Number.isFinite(v)],
  messages_key: ["a non-empty array of {role, content} messages (or its JSON text)", isChat],
} as const;

/**
 * `rawTask[key]` (read through `read`), checked as `option` says; the error names the key,
 * option and value found.
 */
function field(
  task: TaskRow,
  key: string,
  option: keyof typeof EXPECTED,
  read: (raw: unknown) => unknown = (raw) => raw,
): unknown {
  const value = read(task.rawTask[key]);
  if (value === undefined) {
    const keys = Object.keys(task.rawTask).slice(0, 8).map((k) => `"${k}"`).join(", ");
    throw new InputError(
      `${label(task)} has no "${key}" (${option}); its keys are ${keys || "none"}`,
    );
  }
  const [expected, ok] = EXPECTED[option];
  if (!ok(value)) {
    const found = JSON.stringify(value) ?? String(value);
    const shown = found.length > 60 ? `${found.slice(0, 57)}...` : found;
    throw new InputError(
      `${label(task)} has "${key}" (${option}) = ${shown}; expected ${expected}`,
    );
  }
  return value;
}

/** A string's JSON value when it parses (Trinity keeps chats as JSON text), else the value. */
function parseJsonText(value: unknown): unknown {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/** Whether `value` is a chat: a non-empty list of messages. */
function isChat(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0 && value.every(isMessage);
}

/**
 * Whether `m` is a message: a role and text content (or a list of parts); a tool result may be
 * any JSON, an assistant turn with tool calls may have no content.
 */
function isMessage(m: unknown): boolean {
  if (typeof m !== "object" || m === null) return false;
  const { role, content, tool_calls } = m as Record<string, unknown>;
  if (typeof role !== "string") return false;
  if (typeof content === "string" || Array.isArray(content)) return true;
  if (role === "tool") return content !== undefined;
  return role === "assistant" && Array.isArray(tool_calls) && content == null;
}

function label(task: TaskRow): string {
  return task.taskId === undefined ? "Task row" : `Task "${task.taskId}"`;
}
