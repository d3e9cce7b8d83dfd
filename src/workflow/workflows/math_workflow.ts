/**
 * `math_workflow` (Trinity's `MathWorkflow`): `simple_workflow` with the `math` reward fn by
 * default and a system prompt asking for the final answer in `\boxed{}` (unless the chat
 * already opens with a system turn, e.g. from the format's `system_prompt`).
 */

import { taskMessages, taskPrompt } from "../../buffer/task.ts";
import type { WorkflowFactory } from "../workflow.ts";
import { singleTurnWorkflow } from "./single_turn.ts";

/** The default `system_prompt` of `math_workflow`. */
export const MATH_SYSTEM_PROMPT =
  "Solve the problem step by step, then put the final answer in \\boxed{}.";

/**
 * Args: `use_chat_template` (true), `system_prompt` (`MATH_SYSTEM_PROMPT`; "" for none; chat
 * only: a raw text prompt is sent as is).
 */
export const mathWorkflow: WorkflowFactory = singleTurnWorkflow({
  description: "math problems: n samples scored by the math reward fn (\\boxed{} answers)",
  defaultArgs: { system_prompt: MATH_SYSTEM_PROMPT },
  defaultRewardFn: "math",
  messages(task, args) {
    const chat = taskMessages(task);
    if (args.system_prompt === "" || chat[0].role === "system") return chat;
    return [{ role: "system", content: args.system_prompt as string }, ...chat];
  },
  text: (task) => taskPrompt(task),
});
