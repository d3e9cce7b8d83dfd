/**
 * The shape shared by the single-turn built-ins (`simple_workflow`, `math_workflow`,
 * `countdown`): one prompt, `rollout_args.n` samples through the chat template (or the raw text
 * prompt when `use_chat_template` is false), one reward fn call and one experience per sample.
 * A workflow of this shape only says how its prompt is built and which reward fn is its default.
 */

import type { Args } from "../../util/registry.ts";
import type { Task } from "../../buffer/task.ts";
import type { ChatMessage } from "../../model/chat_template.ts";
import { experienceFromRollout } from "../experience_from_rollout.ts";
import { computeReward } from "../rewards/mod.ts";
import { resolveRewardFn, workflowArgs, type WorkflowFactory } from "../workflow.ts";

/** What distinguishes one single-turn workflow from another. */
export interface SingleTurnSpec {
  /** One line for listings. */
  description: string;
  /** The `workflow_args` it reads besides `use_chat_template` (default true). */
  defaultArgs: Args;
  /** The reward fn used when neither the context nor the task names one. */
  defaultRewardFn?: string;
  /** The chat sent when `use_chat_template` is true. */
  messages(task: Task, args: Args): ChatMessage[];
  /** The text prompt sent as is when `use_chat_template` is false. */
  text(task: Task, args: Args): string;
}

/**
 * A workflow factory of the single-turn shape. The prompt is built (and the row checked) when
 * the workflow is created; `run` samples with `task.rolloutArgs` and scores every sample.
 */
export function singleTurnWorkflow(spec: SingleTurnSpec): WorkflowFactory {
  const factory: WorkflowFactory = {
    description: spec.description,
    defaultArgs: { use_chat_template: true, ...spec.defaultArgs },
    create(task, context) {
      const args = workflowArgs(factory, task);
      const rewardFn = resolveRewardFn(task, context, spec.defaultRewardFn);
      const { model } = context;
      const prompt = args.use_chat_template ? spec.messages(task, args) : spec.text(task, args);
      return {
        async run() {
          const options = { ...task.rolloutArgs };
          const rollouts = typeof prompt === "string"
            ? await model.generate(prompt, options)
            : await model.chat(prompt, options);
          return await Promise.all(rollouts.map(async (rollout, runId) => {
            const { reward, metrics } = await computeReward(rewardFn, task, rollout.text);
            const promptText = model.tokenizer.decode(rollout.promptTokens);
            return experienceFromRollout(task, runId, rollout, reward, { metrics, promptText });
          }));
        },
      };
    },
  };
  return factory;
}
