/**
 * The Workflow contract (Trinity's `Workflow`): run one task against the rollout model and
 * return its experiences. Also how a workflow resolves its `workflow_args` and its reward fn.
 * Holds no workflow (see `workflows/`) and no registry (`mod.ts`).
 */

import { type Args, type Configurable, configure, Registry } from "../util/registry.ts";
import type { AuxiliaryModels } from "../auxiliary/auxiliary_models.ts";
import type { Experience } from "../buffer/experience.ts";
import type { ChatMessage } from "../model/chat_template.ts";
import type { Task } from "../buffer/task.ts";
import type { OpenAIEndpoint } from "./openai_client.ts";
import { type ConfiguredRewardFn, REWARD_FUNCTIONS } from "./rewards/mod.ts";
import type { RolloutModel } from "./rollout_model.ts";

/** One task being run: `run` samples, scores and returns experiences of `info.taskId`. */
export interface Workflow {
  /**
   * Runs the task. Throws (naming the task) on a malformed row or a failing reward fn; model
   * errors (e.g. an abort) pass through.
   */
  run(): Promise<Experience[]>;
  /** Re-targets a heavy workflow at `task` (same workflow name) instead of creating a new one. */
  reset?(task: Task): void;
}

/** What a run offers workflows besides the policy (each present only when the run enables it). */
export interface WorkflowServices {
  /**
   * The policy behind an OpenAI-compatible API (`explorer.rollout_model.enable_openai_api`):
   * `openai.openConversation()` gives a base URL and client whose calls are recorded, and
   * `conversation.recording.toExperiences(...)` turns them into experiences.
   */
  openai?: OpenAIEndpoint;
  /**
   * The models of `explorer.auxiliary_models`: `generator(name)` (a Hugging Face model, as a
   * rollout model) and `onnx(name)` (an ONNX model). Reward fns get them in their input.
   */
  auxiliaryModels?: AuxiliaryModels;
  /** The taskset's `reward_fn_args`, over the reward fn's defaults (absent: none). */
  rewardFnArgs?: Readonly<Record<string, unknown>>;
}

/** What a workflow gets besides its task. */
export interface WorkflowContext extends WorkflowServices {
  /** The policy being trained. */
  model: RolloutModel;
  /** The task's reward fn with its `reward_fn_args`; absent: see {@link resolveRewardFn}. */
  rewardFn?: ConfiguredRewardFn;
}

/** A registry entry: the `workflow_args` it reads, with defaults, and a constructor. */
export interface WorkflowFactory extends Configurable {
  /** One line for listings. */
  readonly description: string;
  /** True when it scores with a reward fn (absent: unknown; it may compute its own reward). */
  readonly usesRewardFn?: boolean;
  /** The reward fn it uses when the taskset names none. */
  readonly defaultRewardFn?: string;
  /** True when it needs an auxiliary model (a teacher or a judge: the first configured). */
  readonly needsAuxiliaryModel?: boolean;
  /** A workflow running `task`; throws naming the task on bad `workflow_args` or a bad row. */
  create(task: Task, context: WorkflowContext): Workflow;
  /**
   * For a workflow that reads rows of its own layout (not the format's prompt and answer): why
   * `row` cannot be run, or undefined; such rows are skipped at load.
   */
  rowProblem?(row: Readonly<Record<string, unknown>>): string | undefined;
  /**
   * For a workflow whose first prompt is known without sampling: the text or chat it sends for
   * `task`, so a run can check before any GPU work that the policy's tokenizer encodes it.
   */
  firstPrompt?(task: Task): string | ChatMessage[];
}

/**
 * `task.workflowArgs` resolved over `factory.defaultArgs`; throws on an unknown key or a value
 * of the wrong type, naming the workflow (`task.workflow`) and the known keys.
 *
 * @example
 * ```ts
 * import type { Task } from "../buffer/task.ts";
 * declare const myFactory: WorkflowFactory, task: Task;
 * const args = workflowArgs(myFactory, task); // { use_chat_template: true, ... }
 * ```
 */
export function workflowArgs(factory: WorkflowFactory, task: Task): Args {
  const registry = new Registry<WorkflowFactory>("workflow", [[task.workflow, factory]]);
  return configure(registry, task.workflow, task.workflowArgs).args;
}

/**
 * The reward fn a workflow uses: the context's when given, else `task.rewardFn`, else
 * `fallback` (a workflow's default) with `fallbackArgs`, either with the context's
 * `rewardFnArgs` (the taskset's `reward_fn_args`) over them; its calls get the context's
 * auxiliary models. Throws naming the task when there is none, or on bad arguments.
 */
export function resolveRewardFn(
  task: Task,
  context: WorkflowContext,
  fallback?: string,
  fallbackArgs?: Args,
): ConfiguredRewardFn {
  const { auxiliaryModels } = context;
  if (context.rewardFn) {
    return {
      ...context.rewardFn,
      auxiliaryModels: auxiliaryModels ?? context.rewardFn.auxiliaryModels,
    };
  }
  const name = task.rewardFn ?? fallback;
  if (name === undefined) {
    throw new Error(
      `Cannot run task "${task.taskId}" with workflow "${task.workflow}": it needs a reward fn; set the taskset's "default_reward_fn_type" (known: ${
        REWARD_FUNCTIONS.names().join(", ")
      })`,
    );
  }
  const args = { ...(task.rewardFn === undefined ? fallbackArgs : {}), ...context.rewardFnArgs };
  return { ...configure(REWARD_FUNCTIONS, name, args), auxiliaryModels };
}
