/**
 * `math_boxed_workflow` (Trinity's `MathBoxedWorkflow`, used by DAPO's example): math problems
 * answered in `\boxed{}`, scored by `math_boxed_reward` unless the taskset names a reward fn.
 * With `use_base` the prompt is Trinity's raw `System: ... User: ... Assistant:` text for base
 * models, else a chat. A response cut at the length limit gets an all-zero action mask, as in
 * Trinity. `with_think` and `format_score_coef` reach only the default reward fn.
 */

import type { Args } from "../../algorithm/registry.ts";
import { type Task, taskMessages, taskPrompt } from "../../buffer/task.ts";
import type { WorkflowFactory } from "../workflow.ts";
import { singleTurnWorkflow } from "./single_turn.ts";

/** Trinity's default system prompt of `math_boxed_workflow`. */
export const BOXED_SYSTEM_PROMPT =
  "Please reason step by step, and put your final answer within \\boxed{}.";

/** Trinity's default system prompt with `with_think`. */
export const BOXED_THINK_SYSTEM_PROMPT =
  "You are a helpful assistant that solves MATH problems. You should first thinks about the " +
  "reasoning process in mind and then provides the user with the answer. You should present " +
  "your reasoning process using the format: <think>\n ...your reasoning process here... " +
  "</think>\n first. You should always include your final answer in \\boxed{} as closed-form " +
  "results.";

/** The system prompt: the format's `system_prompt`, else the default for `with_think`. */
function systemPrompt(task: Task, args: Args): string {
  return task.formatArgs.systemPrompt ??
    (args.with_think ? BOXED_THINK_SYSTEM_PROMPT : BOXED_SYSTEM_PROMPT);
}

/**
 * Args: `use_base` (false: chat; true: raw text prompt), `with_think` (false),
 * `format_score_coef` (0.1).
 */
export const mathBoxedWorkflow: WorkflowFactory = singleTurnWorkflow({
  description: "math answered in \\boxed{} (math_boxed_reward); truncated responses masked",
  defaultArgs: { use_base: false, with_think: false, format_score_coef: 0.1 },
  useChat: (args) => !args.use_base,
  defaultRewardFn: "math_boxed_reward",
  defaultRewardArgs: ({ with_think, format_score_coef }) => ({ with_think, format_score_coef }),
  maskTruncated: true,
  messages(task, args) {
    const chat = taskMessages(task);
    if (chat[0].role === "system") return chat;
    return [{ role: "system", content: systemPrompt(task, args) }, ...chat];
  },
  text: (task, args) =>
    `System:${systemPrompt(task, args)}\nUser:\n${taskPrompt(task)}\nAssistant:\n`,
});
