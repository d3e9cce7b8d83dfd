/**
 * `simple_workflow` (Trinity's `SimpleWorkflow`): the task's prompt or messages as the format
 * args say (`taskMessages` / `taskPrompt`), n samples, the task's reward fn on each. Has no
 * default reward fn: the taskset must name one.
 */

import { taskMessages, taskPrompt } from "../../buffer/task.ts";
import type { WorkflowFactory } from "../workflow.ts";
import { singleTurnWorkflow } from "./single_turn.ts";

/** Args: `use_chat_template` (true: `model.chat(taskMessages)`; false: `model.generate(prompt)`). */
export const simpleWorkflow: WorkflowFactory = singleTurnWorkflow({
  description: "one prompt, n samples, the taskset's reward fn on each",
  defaultArgs: {},
  messages: (task) => taskMessages(task),
  text: (task) => taskPrompt(task),
});
