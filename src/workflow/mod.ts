/**
 * The workflow registry (Trinity's `WORKFLOWS`) with the built-in workflows registered
 * explicitly here, and `createWorkflow`, which looks up a task's workflow and creates it;
 * plugins add theirs with `WORKFLOWS.register(name, factory)`. Reward fns are in `rewards/`.
 */

import { Registry } from "../util/registry.ts";
import type { Task } from "../buffer/task.ts";
import type { Workflow, WorkflowContext, WorkflowFactory } from "./workflow.ts";
import { countdownWorkflow } from "./workflows/countdown.ts";
import { frozenLakeWorkflow } from "./workflows/frozen_lake.ts";
import { guessNumberWorkflow } from "./workflows/guess_number.ts";
import { mathBoxedWorkflow } from "./workflows/math_boxed_workflow.ts";
import { mathEvalWorkflow } from "./workflows/math_eval_workflow.ts";
import { mathRmWorkflow } from "./workflows/math_rm_workflow.ts";
import { mathRulerWorkflow, mathTrainableRulerWorkflow } from "./workflows/math_ruler.ts";
import { mathWorkflow } from "./workflows/math_workflow.ts";
import {
  onPolicyDistillMathWorkflow,
  onPolicyDistillWorkflow,
} from "./workflows/on_policy_distill.ts";
import { rubricJudgeWorkflow } from "./workflows/rubric_judge.ts";
import { simpleWorkflow } from "./workflows/simple_workflow.ts";
import { sudokuWorkflow } from "./workflows/sudoku.ts";
import { toolcallWorkflow } from "./workflows/toolcall_workflow.ts";

export {
  resolveRewardFn,
  type Workflow,
  workflowArgs,
  type WorkflowContext,
  type WorkflowFactory,
  type WorkflowServices,
} from "./workflow.ts";
export {
  OpenAIConversation,
  type OpenAIConversationOptions,
  type OpenAIEndpoint,
} from "./openai_client.ts";
export {
  type RecordedCall,
  RecordedConversation,
  type RecordedSample,
} from "./recorded_conversation.ts";
export { Episode } from "./episode.ts";
export {
  experienceFromRollout,
  experienceFromSequence,
  type RolloutExtras,
  type SampledSequence,
} from "./experience_from_rollout.ts";
export { type SingleTurnSpec, singleTurnWorkflow } from "./workflows/single_turn.ts";
export type { Rollout, RolloutModel, RolloutOptions } from "./rollout_model.ts";
export * from "./rewards/mod.ts";

/**
 * Workflows by name: Trinity's text-only ones (`simple_workflow`, `math_workflow`,
 * `math_boxed_workflow`, `math_rm_workflow`, `math_eval_workflow`, `math_ruler_workflow`,
 * `math_trainable_ruler_workflow`, `rubric_judge_workflow`, `on_policy_distill_workflow`,
 * `on_policy_distill_math_workflow`, `frozen_lake_workflow`, `sudoku_workflow`, each `async_` twin, which is the
 * same workflow: every workflow here is asynchronous), `toolcall_workflow` (also
 * `tool_call_workflow`, Trinity's registry name), and rft's
 * (`countdown`, `guess_number`).
 */
export const WORKFLOWS: Registry<WorkflowFactory> = new Registry<WorkflowFactory>("workflow", [
  ["simple_workflow", simpleWorkflow],
  ["async_simple_workflow", simpleWorkflow],
  ["math_workflow", mathWorkflow],
  ["async_math_workflow", mathWorkflow],
  ["math_boxed_workflow", mathBoxedWorkflow],
  ["async_math_boxed_workflow", mathBoxedWorkflow],
  ["math_rm_workflow", mathRmWorkflow],
  ["async_math_rm_workflow", mathRmWorkflow],
  ["math_eval_workflow", mathEvalWorkflow],
  ["async_math_eval_workflow", mathEvalWorkflow],
  ["math_ruler_workflow", mathRulerWorkflow],
  ["async_math_ruler_workflow", mathRulerWorkflow],
  ["math_trainable_ruler_workflow", mathTrainableRulerWorkflow],
  ["rubric_judge_workflow", rubricJudgeWorkflow],
  ["on_policy_distill_workflow", onPolicyDistillWorkflow],
  ["on_policy_distill_math_workflow", onPolicyDistillMathWorkflow],
  ["frozen_lake_workflow", frozenLakeWorkflow],
  ["sudoku_workflow", sudokuWorkflow],
  ["countdown", countdownWorkflow],
  ["guess_number", guessNumberWorkflow],
  ["toolcall_workflow", toolcallWorkflow],
  // Trinity v0.5.2 registers the tool-call workflow under this name; its examples use the other.
  ["tool_call_workflow", toolcallWorkflow],
]);

/**
 * The workflow of `task` (`task.workflow` looked up in {@link WORKFLOWS}); throws listing the
 * known names on an unknown one, and naming the task on bad `workflow_args` or a bad row.
 *
 * @example
 * ```ts
 * import type { Task } from "../buffer/task.ts";
 * declare const task: Task, model: RolloutModel;
 * const exps = await createWorkflow(task, { model }).run();
 * ```
 */
export function createWorkflow(task: Task, context: WorkflowContext): Workflow {
  return WORKFLOWS.get(task.workflow).create(task, context);
}
