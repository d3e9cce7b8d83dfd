/**
 * `math_eval_workflow` (Trinity's `MathEvalWorkflow`, Qwen2.5-Math's evaluation): the row's
 * `question` with Qwen2.5-Math's prompt (a helpful-assistant system turn; "Please reason step by
 * step, and put your final answer within \boxed{}."), one sample at temperature 0.6 and top-p
 * 0.8 whatever the taskset says, scored by `accuracy_reward` (metric `accuracy`; the reward is
 * the accuracy, where Trinity leaves it unset).
 */

import type { ChatMessage } from "../../model/chat_template.ts";
import { taskPrompt } from "../../buffer/task.ts";
import type { WorkflowFactory } from "../workflow.ts";
import { singleTurnWorkflow } from "./single_turn.ts";

/** Qwen2.5-Math's chat around `question`. */
export function qwenMathChat(question: string): ChatMessage[] {
  return [
    { role: "system", content: "You are a helpful assistant." },
    {
      role: "user",
      content:
        `${question}\nPlease reason step by step, and put your final answer within \\boxed{}.`,
    },
  ];
}

/** The row's `question` (Trinity reads that key whatever the format says). */
function question(row: Readonly<Record<string, unknown>>, taskId: string): string {
  const value = row.question;
  if (typeof value !== "string") {
    throw new Error(`Task "${taskId}" has no "question" text; math_eval_workflow reads that key`);
  }
  return value;
}

/** Args: none. */
export const mathEvalWorkflow: WorkflowFactory = singleTurnWorkflow({
  description: "Qwen2.5-Math evaluation: one \\boxed{} answer at temperature 0.6, accuracy",
  defaultArgs: {},
  useChat: () => true,
  defaultRewardFn: "accuracy_reward",
  rolloutOptions: { n: 1, temperature: 0.6, topP: 0.8 },
  messages: (task) => qwenMathChat(question(task.rawTask, task.taskId)),
  text: (task) => taskPrompt(task),
});
