/**
 * `countdown` (TinyZero's countdown task): the prompt is built from the row's `nums` and
 * `target`, and samples are scored by the `countdown` reward fn by default. With
 * `use_chat_template` false the prompt is TinyZero's base-model template, ending in `<think>`.
 */

import type { Task } from "../../buffer/task.ts";
import { countdownRow } from "../rewards/countdown.ts";
import type { WorkflowFactory } from "../workflow.ts";
import { singleTurnWorkflow } from "./single_turn.ts";

/** Args: `use_chat_template` (true). Rows: `{"target": 24, "nums": [3, 4, 8, 1]}`. */
export const countdownWorkflow: WorkflowFactory = singleTurnWorkflow({
  description: "countdown puzzles (reach target from nums), scored by the countdown reward fn",
  defaultArgs: {},
  defaultRewardFn: "countdown",
  messages: (task) => [{ role: "user", content: countdownQuestion(task) }],
  text: (task) =>
    "A conversation between User and Assistant. The user asks a question, and the Assistant " +
    "solves it. The assistant first thinks about the reasoning process in the mind and then " +
    `provides the user with the answer.\nUser: ${countdownQuestion(task)}\n` +
    "Assistant: Let me solve this step by step.\n<think>",
});

/** TinyZero's question for the row of `task`. */
function countdownQuestion(task: Task): string {
  const { target, nums } = countdownRow(task);
  return `Using the numbers [${nums.join(", ")}], create an equation that equals ${target}. ` +
    "You can use basic arithmetic operations (+, -, *, /) and each number can only be used " +
    "once. Show your work in <think> </think> tags. And return the final answer in " +
    "<answer> </answer> tags, for example <answer> (1 + 2) / 3 </answer>.";
}
