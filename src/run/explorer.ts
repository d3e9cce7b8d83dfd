/**
 * The Explorer: each explore step draws `batch_size` tasks from the taskset, runs their
 * workflows on the rollout model, computes advantages when the experience pipeline owns them,
 * runs the experience operators and puts what is kept into the experience buffer (which
 * persists it before acknowledging), then saves its cursor. With dynamic sampling it draws more
 * batches until `batch_size` groups survive the operators (`dynamic_sampling.ts`). It also
 * evaluates the rollout model on the eval tasksets. Knows nothing of the trainer: the
 * synchronizer moves weights in.
 */

import type { Experience } from "../buffer/experience.ts";
import type { ExperienceBuffer } from "../buffer/experience_buffer.ts";
import { type ExperienceOperator, runOperators } from "../buffer/operators/mod.ts";
import type { Taskset, TasksetState } from "../buffer/taskset.ts";
import { writeAtomic } from "../util/write_atomic.ts";
import { applyAdvantages, type ConfiguredAdvantageFn } from "./apply_advantages.ts";
import {
  countGroups,
  type DynamicSampling,
  firstGroups,
  wantsMoreBatches,
  withGroupFilter,
} from "./dynamic_sampling.ts";
import { summarizeExperiences } from "./summarize.ts";
import { runTasks, type RunTasksOptions, type TaskFailure } from "./workflow_runner.ts";

/** Name of the explorer's cursor file in the stage directory. */
export const EXPLORER_STATE_FILE = "explorer_state.json";

/** The explorer's cursor after one explore step. */
export interface ExplorerCursor {
  /** Explore steps done. */
  step: number;
  taskset: TasksetState;
  /** The policy version that step sampled (absent in files of older versions). */
  policyVersion?: number;
}

/** The explorer's cursor file, saved after each explore step. */
export interface ExplorerState extends ExplorerCursor {
  /** The cursors of the last {@link CURSOR_HISTORY} steps, oldest first, this one last. */
  history?: ExplorerCursor[];
}

/** Steps of cursor history kept, to rewind the explorer to a trainer checkpoint. */
const CURSOR_HISTORY = 64;

/**
 * The cursor a resumed explorer continues from when a restarted buffer keeps only experiences
 * of policy versions up to `maxVersion` (the trainer checkpoint's): the latest step that
 * sampled no newer version, so every step after it is explored again. A file without history
 * is taken as it is.
 */
export function cursorForVersion(state: ExplorerState, maxVersion: number): ExplorerState {
  if (!state.history?.length) return state;
  const fits = state.history.filter((c) => (c.policyVersion ?? 0) <= maxVersion);
  const cursor = fits.at(-1);
  if (!cursor) return state;
  return { ...cursor, history: state.history.filter((c) => c.step <= cursor.step) };
}

/** An eval taskset with its name (metric keys `eval/<name>/...`). */
export interface EvalTaskset {
  name: string;
  taskset: Taskset;
  /** Its `reward_fn_args` (absent: the services' own). */
  rewardFnArgs?: Readonly<Record<string, unknown>>;
}

/** Options of an {@link Explorer}. */
export interface ExplorerOptions extends Omit<RunTasksOptions, "signal"> {
  /** Training tasks; absent for an explorer that only evaluates. */
  taskset?: Taskset;
  evalTasksets: readonly EvalTaskset[];
  /** Tasks per explore step. */
  batchSize: number;
  /** Where kept experiences go; absent: they are returned only. */
  buffer?: ExperienceBuffer;
  operators: readonly ExperienceOperator[];
  /** The advantage fn when the pipeline computes advantages. */
  advantageFn?: ConfiguredAdvantageFn;
  /** Drop equal-reward groups and refill them by drawing more tasks (DAPO). */
  dynamicSampling?: DynamicSampling;
  /** Directory of the cursor file. */
  stateDir: string;
  /** Receives one line per failed task. */
  log: (line: string) => void;
  signal?: AbortSignal;
}

/** What one explore step did. */
export interface ExploreStepResult {
  /** False once the taskset is exhausted (nothing was drawn). */
  drew: boolean;
  /** Experiences put into the buffer. */
  kept: Experience[];
  metrics: Record<string, number>;
}

/** Runs workflows on the rollout model and feeds the buffer. */
export class Explorer {
  #step = 0;
  #history: ExplorerCursor[] = [];
  #failures = 0;

  /** The pipeline: the configured operators, plus the group filter dynamic sampling needs. */
  readonly #operators: readonly ExperienceOperator[];

  constructor(readonly options: ExplorerOptions) {
    this.#operators = withGroupFilter(options.operators, options.dynamicSampling);
  }

  /** Explore steps done. */
  get step(): number {
    return this.#step;
  }

  /** Moves to a saved cursor (resume). */
  restore(state: ExplorerState): void {
    this.#step = state.step;
    this.#history = state.history ?? [];
    this.options.taskset?.restore(state.taskset);
  }

  /** One explore step (see the file comment). */
  async exploreStep(): Promise<ExploreStepResult> {
    const { taskset, batchSize, buffer, dynamicSampling } = this.options;
    if (!taskset) throw new Error("Cannot explore: the explorer has no taskset");
    const experiences: Experience[] = [];
    let tasksDrawn = 0, failed = 0, retries = 0, batches = 0, seconds = 0;
    let processed: { experiences: Experience[]; metrics: Record<string, number> } | undefined;
    do {
      const tasks = taskset.nextBatch(batchSize);
      if (!tasks) break;
      const started = performance.now();
      const ran = await runTasks(tasks, this.#runOptions());
      seconds += (performance.now() - started) / 1000;
      this.#report(ran.failures);
      experiences.push(...ran.experiences);
      tasksDrawn += tasks.length;
      failed += ran.failures.length;
      retries += ran.retries;
      batches++;
      processed = this.#process(experiences);
    } while (
      wantsMoreBatches(dynamicSampling, batches, countGroups(processed.experiences), batchSize)
    );
    if (!processed) return { drew: false, kept: [], metrics: {} };
    const metrics: Record<string, number> = {
      ...summarizeExperiences("rollout", experiences),
      "explorer/tasks": tasksDrawn,
      "explorer/failed_tasks": failed,
      "explorer/failed_tasks_total": this.#failures,
      "explorer/retries": retries,
      "explorer/policy_version": this.options.model.policyVersion,
      "time/explore_s": seconds,
      "rollout/tokens_per_s": responseTokens(experiences) / seconds,
      ...processed.metrics,
    };
    let kept = processed.experiences;
    if (dynamicSampling) {
      kept = firstGroups(kept, batchSize);
      metrics["explorer/gen_batches"] = batches;
      metrics["explorer/kept_groups"] = countGroups(kept);
    }
    if (buffer && kept.length) {
      const put = await buffer.put(kept);
      metrics["buffer/accepted"] = put.accepted;
      metrics["buffer/rejected"] = put.rejected;
    }
    metrics["pipeline/kept"] = kept.length;
    this.#step++;
    const cursor: ExplorerCursor = {
      step: this.#step,
      taskset: taskset.state(),
      policyVersion: metrics["explorer/policy_version"],
    };
    this.#history = [...this.#history, cursor].slice(-CURSOR_HISTORY);
    const state: ExplorerState = { ...cursor, history: this.#history };
    await writeAtomic(
      `${this.options.stateDir}/${EXPLORER_STATE_FILE}`,
      JSON.stringify(state) + "\n",
    );
    return { drew: true, kept, metrics };
  }

  /**
   * Advantages (when the pipeline owns them), then the operators, over one step's experiences;
   * a refill runs it again over all of them, so batch-level statistics cover the whole step.
   */
  #process(experiences: readonly Experience[]) {
    const { advantageFn } = this.options;
    const metrics: Record<string, number> = {};
    let kept = [...experiences];
    if (advantageFn) {
      const advantaged = applyAdvantages(advantageFn, kept);
      kept = advantaged.experiences;
      Object.assign(metrics, advantaged.metrics);
    }
    const processed = runOperators(this.#operators, kept);
    for (const [key, value] of Object.entries(processed.metrics)) {
      metrics[`pipeline/${key}`] = value;
    }
    return { experiences: processed.experiences, metrics };
  }

  /**
   * Runs every task of each eval taskset once (its `rollout_args`, e.g. greedy with n = 1);
   * returns `eval/<name>/...` metrics (accuracy = mean of the workflows' `accuracy`).
   */
  async evaluate(): Promise<Record<string, number>> {
    const metrics: Record<string, number> = {};
    for (const { name, taskset, rewardFnArgs } of this.options.evalTasksets) {
      const start = taskset.state();
      const tasks = taskset.nextBatch(taskset.size) ?? [];
      taskset.restore({ ...start, epoch: 0, index: 0 });
      const started = performance.now();
      const { experiences, failures } = await runTasks(tasks, this.#runOptions(rewardFnArgs));
      this.#report(failures);
      Object.assign(metrics, summarizeExperiences(`eval/${name}`, experiences), {
        [`eval/${name}/failed_tasks`]: failures.length,
        [`time/eval_${name}_s`]: (performance.now() - started) / 1000,
      });
    }
    return metrics;
  }

  #runOptions(rewardFnArgs?: Readonly<Record<string, unknown>>): RunTasksOptions {
    const { model, runnerNum, maxTimeout, maxRetryTimes, signal } = this.options;
    const services = rewardFnArgs
      ? { ...this.options.services, rewardFnArgs }
      : this.options.services;
    return { model, runnerNum, maxTimeout, maxRetryTimes, signal, services };
  }

  #report(failures: readonly TaskFailure[]): void {
    this.#failures += failures.length;
    for (const f of failures) {
      this.options.log(
        `task ${f.taskId} (workflow ${f.workflow}) failed after ${f.attempts} attempt(s): ${f.error}`,
      );
    }
  }
}

/** Generated tokens in `experiences`. */
function responseTokens(experiences: readonly Experience[]): number {
  return experiences.reduce((sum, e) => sum + e.actionMask.reduce((a, b) => a + b, 0), 0);
}
