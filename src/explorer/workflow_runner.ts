/**
 * Runs tasks through their workflows with `runner_num` runners working concurrently, a timeout
 * per attempt and retries (each retried attempt's cause logged). A workflow that throws or times out on every attempt is recorded as
 * a failure (task id, workflow, cause) and counted, never fatal: the other tasks go on. Model
 * calls of concurrent runners meet in the rollout model, which batches them. Runners keep their
 * workflow objects and reuse them through `reset(task)` when a workflow offers it. An abort is
 * fatal: `runTasks` rejects with its reason at once, abandoning running attempts.
 */

import type { Experience } from "../buffer/experience.ts";
import type { Task } from "../buffer/task.ts";
import type { Registry } from "../util/registry.ts";
import type { Workflow, WorkflowFactory, WorkflowServices } from "../workflow/workflow.ts";
import { WORKFLOWS } from "../workflow/mod.ts";
import type { RolloutModel } from "../workflow/rollout_model.ts";

/** Options of {@link runTasks}. */
export interface RunTasksOptions {
  /** The model the workflows sample from. */
  model: RolloutModel;
  /** Runners working at once (`explorer.runner_num`). */
  runnerNum: number;
  /** Seconds an attempt may take (`explorer.max_timeout`). */
  maxTimeout: number;
  /** Further attempts after a failed one (`explorer.max_retry_times`). */
  maxRetryTimes: number;
  /** Gets one line per failed attempt that is retried, naming the task and the cause. */
  log?: (line: string) => void;
  /** Stops starting tasks; running ones are abandoned. */
  signal?: AbortSignal;
  /** What the run offers workflows besides the model (e.g. the OpenAI endpoint). */
  services?: WorkflowServices;
  /** Where `task.workflow` is looked up; default {@link WORKFLOWS}. */
  workflows?: Registry<WorkflowFactory>;
}

/** A task that failed every attempt. */
export interface TaskFailure {
  taskId: string;
  workflow: string;
  /** The last attempt's error message. */
  error: string;
  attempts: number;
}

/** What {@link runTasks} returns. */
export interface RunTasksResult {
  /** Experiences of the tasks that succeeded, in task order. */
  experiences: Experience[];
  failures: TaskFailure[];
  /** Attempts that failed and were retried. */
  retries: number;
}

/** Runs every task of `tasks` (see the file comment). */
export async function runTasks(
  tasks: readonly Task[],
  options: RunTasksOptions,
): Promise<RunTasksResult> {
  const results: Experience[][] = tasks.map(() => []);
  const failures: TaskFailure[] = [];
  let retries = 0;
  let next = 0;
  const runner = async () => {
    const workflows = new Map<string, Workflow>();
    while (next < tasks.length) {
      options.signal?.throwIfAborted();
      const index = next++;
      const task = tasks[index];
      for (let attempt = 1;; attempt++) {
        try {
          results[index] = await boundedAttempt(
            workflowFor(workflows, task, options).run(),
            options.maxTimeout,
            task,
            options.signal,
          );
          break;
        } catch (err) {
          options.signal?.throwIfAborted();
          workflows.delete(task.workflow);
          if (attempt > options.maxRetryTimes) {
            failures.push({
              taskId: task.taskId,
              workflow: task.workflow,
              error: (err as Error).message ?? String(err),
              attempts: attempt,
            });
            break;
          }
          retries++;
          options.log?.(
            `task ${task.taskId} (workflow ${task.workflow}) attempt ${attempt} of ` +
              `${options.maxRetryTimes + 1} failed, retrying: ${(err as Error).message ?? err}`,
          );
        }
      }
    }
  };
  const count = Math.max(1, Math.min(options.runnerNum, tasks.length));
  await Promise.all(Array.from({ length: count }, runner));
  return { experiences: results.flat(), failures, retries };
}

/** The runner's workflow for `task`: its cached one reset to `task`, or a new one. */
function workflowFor(
  workflows: Map<string, Workflow>,
  task: Task,
  { model, services, workflows: registry = WORKFLOWS }: RunTasksOptions,
): Workflow {
  const cached = workflows.get(task.workflow);
  if (cached?.reset) {
    cached.reset(task);
    return cached;
  }
  const workflow = registry.get(task.workflow).create(task, { ...services, model });
  workflows.set(task.workflow, workflow);
  return workflow;
}

/**
 * `promise`, or a rejection after `seconds` naming the task, or the abort reason of `signal`,
 * whichever comes first.
 */
function boundedAttempt<T>(
  promise: Promise<T>,
  seconds: number,
  task: Task,
  signal?: AbortSignal,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort = () => {};
  const stop = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`task "${task.taskId}" timed out after ${seconds} s`)),
      seconds * 1000,
    );
    onAbort = () => reject(signal!.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([promise, stop]).finally(() => {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  });
}
