/**
 * `toolcall_reward`: Trinity's reward of `toolcall_workflow` (Tool-N1's `compute_score_v0` with
 * Trinity's two rules against reward hacking). The response must think once, in one
 * `<think>...</think>` before any `<tool_call>`, and its last `<tool_call>...</tool_call>` must
 * hold JSON of the calls (one call or a list of `{"name", "arguments"}`) equal, as a multiset of
 * (name, arguments), to the task's answer (Trinity's `answer` key: the calls, or their JSON
 * text; an empty list expects no call). Reward 1, else 0.
 */

import { InputError } from "../../util/input_error.ts";
import type { RewardFnFactory } from "./reward_fn.ts";

/** The JSON value of the last `<tool_call>...</tool_call>` block, or undefined. */
function lastToolCallBlock(response: string): unknown {
  const blocks = [...response.matchAll(/<tool_call>([\s\S]*?)<\/tool_call>/g)];
  if (blocks.length === 0) return undefined;
  try {
    let value = JSON.parse(blocks.at(-1)![1].trim());
    if (typeof value === "string") value = JSON.parse(value);
    return value;
  } catch {
    return undefined;
  }
}

/** `value` as JSON with every object's keys sorted (Python's `json.dumps(sort_keys=True)`). */
function sortedJson(value: unknown): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : typeof v === "object" && v !== null
      ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sort((v as never)[k])]))
      : v;
  return JSON.stringify(sort(value));
}

/** The multiset of `keyOf` over `items`, as a comparable text. */
function multiset(
  items: readonly Record<string, unknown>[],
  keyOf: (c: Record<string, unknown>) => string,
): string {
  return JSON.stringify(items.map(keyOf).sort());
}

/** Tool-N1's `validate_result`: 2 when the calls equal the answer's, 1 when their names do, else 0. */
function matchScore(calls: Record<string, unknown>[], answer: Record<string, unknown>[]): number {
  if (calls.length === 0 || answer.length === 0) return calls.length === answer.length ? 2 : 0;
  const hashable = (c: Record<string, unknown>) => typeof c.name !== "object" || c.name === null;
  if (!calls.every(hashable) || !answer.every(hashable)) return 0;
  const full = (c: Record<string, unknown>) => JSON.stringify([c.name, sortedJson(c.arguments)]);
  if (multiset(calls, full) === multiset(answer, full)) return 2;
  const name = (c: Record<string, unknown>) => JSON.stringify(c.name);
  return multiset(calls, name) === multiset(answer, name) ? 1 : 0;
}

/** The count of `part` in `text`. */
const occurrences = (text: string, part: string) => text.split(part).length - 1;

/** 1 when `response` thinks once, then calls exactly the tools `answer` holds; else 0. */
export function toolcallScore(response: string, answer: unknown): number {
  const expected = typeof answer === "string" ? JSON.parse(answer) : answer;
  if (!Array.isArray(expected)) {
    throw new InputError(
      `the answer is ${
        JSON.stringify(answer)?.slice(0, 60)
      }; expected a list of calls or its JSON text`,
    );
  }
  let result = lastToolCallBlock(response);
  if (result === undefined) return 0;
  if (typeof result === "object" && result !== null && !Array.isArray(result)) result = [result];
  if (occurrences(response, "<think>") !== 1 || occurrences(response, "</think>") !== 1) return 0;
  const toolCallAt = response.indexOf("<tool_call>");
  if (toolCallAt !== -1 && response.indexOf("</think>") > toolCallAt) return 0;
  const isCall = (c: unknown) =>
    typeof c === "object" && c !== null && !Array.isArray(c) && "name" in c && "arguments" in c;
  if (!Array.isArray(result) || !result.every(isCall)) return 0;
  return matchScore(result, expected) === 2 ? 1 : 0;
}

/** See the file comment; `answer_key`: the row key of the expected calls (default `answer`). */
export const toolcallReward: RewardFnFactory = {
  description: "Trinity's toolcall_workflow reward: think once, then exactly the expected calls",
  defaultArgs: { answer_key: "answer" },
  compute({ response, task }, args) {
    const key = args.answer_key as string;
    const answer = task.rawTask[key];
    if (answer === undefined) {
      throw new InputError(`Task "${task.taskId}" has no "${key}" (the expected tool calls)`);
    }
    const reward = toolcallScore(response, answer);
    return { reward, metrics: { accuracy: reward } };
  },
};
