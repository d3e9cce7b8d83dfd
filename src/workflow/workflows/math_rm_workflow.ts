/**
 * `math_rm_workflow` (Trinity's `MathRMWorkflow`): the task's chat, `rollout_args.n` samples,
 * each scored by the taskset's reward fn. Trinity scores with an RM-Gallery reward model; rft
 * has no such judge built in: name a reward fn that calls one (a plugin fn can use
 * `explorer.auxiliary_models`), or the default, the rule-based `math`, is used.
 */

import { taskMessages, taskPrompt } from "../../buffer/task.ts";
import type { WorkflowFactory } from "../workflow.ts";
import { singleTurnWorkflow } from "./single_turn.ts";

/** Args: none besides `use_chat_template` (true). */
export const mathRmWorkflow: WorkflowFactory = singleTurnWorkflow({
  description: "math chat scored by the taskset's reward fn (a judge's, or math by default)",
  defaultArgs: {},
  defaultRewardFn: "math",
  messages: (task) => taskMessages(task),
  text: (task) => taskPrompt(task),
});
