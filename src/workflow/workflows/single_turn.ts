/**
 * The shape shared by the single-turn built-ins (`simple_workflow`, `math_workflow`,
 * `math_boxed_workflow`, `math_rm_workflow`, `countdown`): one prompt, `rollout_args.n` samples
 * through the chat template (or a raw text prompt), one reward fn call and one experience per
 * sample. A workflow of this shape only says how its prompt is built, which reward fn (and args)
 * is its default, and whether truncated responses are kept out of training.
 */

import type { Args } from "../../util/registry.ts";
import type { Task } from "../../buffer/task.ts";
import type { ChatMessage } from "../../model/chat_template.ts";
import { withoutActions } from "../../buffer/operators/mask_response_truncated.ts";
import { experienceFromRollout } from "../experience_from_rollout.ts";
import { computeReward } from "../rewards/mod.ts";
import { resolveRewardFn, workflowArgs, type WorkflowFactory } from "../workflow.ts";
import type { RolloutOptions } from "../rollout_model.ts";

/** What distinguishes one single-turn workflow from another. */
export interface SingleTurnSpec {
  /** One line for listings. */
  description: string;
  /**
   * The `workflow_args` it reads; `use_chat_template` (default true) is added unless the spec
   * decides chat or text itself (`useChat`).
   */
  defaultArgs: Args;
  /** Whether the chat (true) or the text prompt is sent; default: `use_chat_template`. */
  useChat?(args: Args): boolean;
  /** The reward fn used when neither the context nor the task names one. */
  defaultRewardFn?: string;
  /** Arguments of the default reward fn, from the workflow's args; default: its defaults. */
  defaultRewardArgs?(args: Args): Args;
  /** Zero the action mask of responses cut at the length limit (Trinity's math_boxed). */
  maskTruncated?: boolean;
  /** Sampling options over the task's `rollout_args` (e.g. an eval workflow's fixed ones). */
  rolloutOptions?: Partial<RolloutOptions>;
  /** The chat sent when the workflow chats. */
  messages(task: Task, args: Args): ChatMessage[];
  /** The text prompt sent as is otherwise. */
  text(task: Task, args: Args): string;
}

/**
 * A workflow factory of the single-turn shape. The prompt is built (and the row checked) when
 * the workflow is created; `run` samples with `task.rolloutArgs` and scores every sample.
 */
export function singleTurnWorkflow(spec: SingleTurnSpec): WorkflowFactory {
  const useChat = spec.useChat ?? ((args: Args) => args.use_chat_template as boolean);
  const factory: WorkflowFactory = {
    description: spec.description,
    defaultArgs: spec.useChat ? spec.defaultArgs : { use_chat_template: true, ...spec.defaultArgs },
    usesRewardFn: true,
    defaultRewardFn: spec.defaultRewardFn,
    create(task, context) {
      const args = workflowArgs(factory, task);
      const rewardArgs = spec.defaultRewardArgs?.(args);
      const rewardFn = resolveRewardFn(task, context, spec.defaultRewardFn, rewardArgs);
      const { model } = context;
      const prompt = factory.firstPrompt!(task);
      return {
        async run() {
          const options = { ...task.rolloutArgs, ...spec.rolloutOptions };
          const rollouts = typeof prompt === "string"
            ? await model.generate(prompt, options)
            : await model.chat(prompt, options);
          return await Promise.all(rollouts.map(async (rollout, runId) => {
            const { reward, metrics } = await computeReward(
              rewardFn,
              task,
              rollout.text,
              rollout.responseTokens.length,
            );
            const promptText = model.tokenizer.decode(rollout.promptTokens);
            const exp = experienceFromRollout(task, runId, rollout, reward, {
              metrics,
              promptText,
            });
            return spec.maskTruncated && exp.truncated ? withoutActions(exp) : exp;
          }));
        },
      };
    },
  };
  factory.firstPrompt = (task) => {
    const args = workflowArgs(factory, task);
    return useChat(args) ? spec.messages(task, args) : spec.text(task, args);
  };
  return factory;
}
