/**
 * The Explorer: each explore step draws `batch_size` tasks from its {@link TaskSource} (the task
 * scheduler over one or several tasksets, or a cluster run's work queue), runs their workflows on
 * the rollout model, feeds each task's mean reward back to the source (its selectors and
 * lessons), computes advantages when the experience pipeline owns them, runs the experience
 * operators and puts what is kept into its {@link ExperienceSink} (the experience buffer, which
 * persists it before acknowledging, or a cluster run's experience stream), then saves its cursor
 * and the source's state (one file per step under `task_schedule/`, kept for the steps of the
 * cursor history). Before the put its cursor file names the step's experiences as pending, so a
 * resume after a kill between the put and the cursor discards them and explores the step again
 * (the buffer's `discard`) instead of training them beside their second exploration. With
 * dynamic sampling it draws more batches until `batch_size` groups survive the operators
 * (`dynamic_sampling.ts`). `run` is
 * the explorer's loop: sync -> (evaluate) -> explore step -> report, until `total_steps` or the
 * end of the taskset. Steps in which every task failed end the run with an error after
 * {@link MAX_EMPTY_STEPS} in a row, or at the end of a run that kept nothing; a step whose groups
 * were all filtered by the pipeline (DAPO's equal-reward groups, early in training) warns and the
 * run goes on, as in Trinity (`pipeline/filtered_steps_total` counts them). Knows nothing of the trainer: the synchronizer moves weights in (in one
 * process `sync/synchronizer.ts`, across processes `cluster/remote_explorer_sync.ts`).
 */

import type { Experience } from "../buffer/experience.ts";
import type { PutResult } from "../buffer/experience_buffer.ts";
import { type ExperienceOperator, runOperators } from "../buffer/operators/mod.ts";
import type { Task } from "../buffer/task.ts";
import type { TaskScheduleState } from "../buffer/taskset_scheduler.ts";
import type { TasksetState } from "../buffer/taskset.ts";
import { writeAtomic } from "../util/write_atomic.ts";
import { applyAdvantages, type ConfiguredAdvantageFn } from "../algorithm/apply_advantages.ts";
import type { DynamicSampling } from "../algorithm/resolve_algorithm.ts";
import { countGroups, firstGroups, wantsMoreBatches, withGroupFilter } from "./dynamic_sampling.ts";
import { summarizeExperiences } from "./summarize.ts";
import { runTasks, type RunTasksOptions, type TaskFailure } from "./workflow_runner.ts";

/** Name of the explorer's cursor file in the stage directory. */
export const EXPLORER_STATE_FILE = "explorer_state.json";

/** Directory (in the stage directory) of the scheduler's state after each step. */
export const TASK_SCHEDULE_DIR = "task_schedule";

/** The explorer's cursor after one explore step. */
export interface ExplorerCursor {
  /** Explore steps done. */
  step: number;
  /**
   * The single taskset's cursor, in files of older versions; newer files keep the scheduler's
   * state in `task_schedule/step_<step>.json`.
   */
  taskset?: TasksetState;
  /** The policy version that step sampled (absent in files of older versions). */
  policyVersion?: number;
}

/** The experiences of an explore step being put, before its cursor is saved. */
export interface PendingPut {
  /** The explore step (the cursor's step + 1). */
  step: number;
  /** The eids of the experiences put. */
  eids: string[];
}

/** The explorer's cursor file, saved after each explore step. */
export interface ExplorerState extends ExplorerCursor {
  /** The cursors of the last {@link CURSOR_HISTORY} steps, oldest first, this one last. */
  history?: ExplorerCursor[];
  /**
   * Set while step `step + 1`'s experiences are being put: found on resume, they may be
   * persisted although that step is explored again, and must never be handed out.
   */
  pending?: PendingPut;
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

/** Explore steps in a row in which every task may fail before the run fails. */
export const MAX_EMPTY_STEPS = 3;

/** The synchronizer as the explorer sees it (`sync/synchronizer.ts`). */
export interface ExplorerSync {
  /** Waits (and takes new weights) as the sync style says before explore step `step`. */
  beforeExploreStep(step: number): Promise<void>;
  /** Explore step `step` is in the buffer. */
  exploreStepDone(step: number): void;
  /** No explore step follows. */
  explorerFinished(): void;
}

/**
 * Where the explorer's tasks come from: the `TasksetScheduler` in one process
 * (`buffer/taskset_scheduler.ts`: one or several tasksets, selectors that learn from rewards), a
 * shared work queue across processes (`cluster/task_queue.ts`).
 */
export interface TaskSource {
  /** The next `batchSize` tasks, or null once no more come. */
  nextBatch(batchSize: number): Task[] | null | Promise<Task[] | null>;
  /** Takes an explore step's experiences (each task's rewards); returns metrics to log. */
  feedback(experiences: readonly Experience[]): Record<string, number>;
  /** The state saved after each step, to continue exactly there. */
  state(): TaskScheduleState;
  /** Moves to a saved state (resume). */
  restore(state: TaskScheduleState): void;
}

/**
 * Where kept experiences go: the `ExperienceBuffer` in one process, a stream across
 * processes (`cluster/experience_publisher.ts`). Resolves once they are stored.
 */
export interface ExperienceSink {
  put(exps: readonly Experience[]): Promise<PutResult>;
}

/** Options of {@link Explorer.run}. */
export interface ExplorerRunOptions {
  /** The step to stop after (`buffer.total_steps`); Infinity: until the taskset ends. */
  totalSteps: number;
  sync?: ExplorerSync;
  /** Runs before each step with the rollout model's version (e.g. an evaluation when due). */
  beforeStep?: (version: number) => Promise<void>;
  /** Receives each explore step's metrics. */
  report: (step: number, metrics: Record<string, number>) => Promise<void>;
}

/** Options of an {@link Explorer}. */
export interface ExplorerOptions extends Omit<RunTasksOptions, "signal"> {
  /** The training tasks. */
  tasks: TaskSource;
  /** Tasks per explore step. */
  batchSize: number;
  /** Where kept experiences go; absent: they are returned only. */
  buffer?: ExperienceSink;
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
  /** The cursor file as last written or restored. */
  #saved: ExplorerState = { step: 0, history: [] };
  #failures = 0;
  /** Steps in a row in which every task failed, and the last error. */
  #empty = { steps: 0, reason: "" };
  /** Steps whose every group the pipeline filtered. */
  #filtered = 0;

  /** The pipeline: the configured operators, plus the group filter dynamic sampling needs. */
  readonly #operators: readonly ExperienceOperator[];

  constructor(readonly options: ExplorerOptions) {
    this.#operators = withGroupFilter(options.operators, options.dynamicSampling);
  }

  /** Explore steps done. */
  get step(): number {
    return this.#step;
  }

  /**
   * Moves to a saved cursor (resume): its step, history and the scheduler's state saved with
   * that step (or, in a file of an older version, the single taskset's cursor).
   */
  async restore(state: ExplorerState): Promise<void> {
    this.#step = state.step;
    this.#history = state.history ?? [];
    const { pending: _pending, ...cursor } = state;
    this.#saved = cursor;
    const { tasks } = this.options;
    if (state.step === 0 && !state.taskset) return; // nothing explored: the schedule is fresh
    if (state.taskset) {
      tasks.restore({ ...tasks.state(), tasksets: [state.taskset] });
      return;
    }
    const path = this.#schedulePath(state.step);
    let saved: TaskScheduleState;
    try {
      saved = JSON.parse(await Deno.readTextFile(path));
    } catch (err) {
      throw new Error(`Cannot resume the task schedule from ${path}: ${(err as Error).message}`);
    }
    tasks.restore(saved);
  }

  /**
   * The explorer's loop (see the file comment); returns the last step done. Tells the
   * synchronizer it finished however it ends.
   */
  async run(options: ExplorerRunOptions): Promise<number> {
    const { sync } = options;
    const first = this.#step;
    let keptAny = false;
    try {
      while (this.#step < options.totalSteps) {
        const step = this.#step + 1;
        await sync?.beforeExploreStep(step);
        await options.beforeStep?.(this.options.model.policyVersion);
        const result = await this.exploreStep();
        if (!result.drew) break;
        keptAny ||= result.kept.length > 0;
        if (this.#empty.steps >= MAX_EMPTY_STEPS) throw this.#emptyError();
        await options.report(step, result.metrics);
        sync?.exploreStepDone(step);
      }
      if (this.#step > first && !keptAny && this.#empty.steps > 0) throw this.#emptyError();
      return this.#step;
    } finally {
      sync?.explorerFinished();
    }
  }

  #emptyError(): Error {
    const { steps, reason } = this.#empty;
    return new Error(
      `Explorer kept no experience in ${steps} step(s) in a row up to step ${this.#step}: ${reason}`,
    );
  }

  /** One explore step (see the file comment). */
  async exploreStep(): Promise<ExploreStepResult> {
    const { tasks: scheduler, batchSize, buffer, dynamicSampling } = this.options;
    let lastError = "";
    const experiences: Experience[] = [];
    let tasksDrawn = 0, failed = 0, retries = 0, batches = 0, seconds = 0;
    let processed: { experiences: Experience[]; metrics: Record<string, number> } | undefined;
    do {
      const tasks = await scheduler.nextBatch(batchSize);
      if (!tasks) break;
      const started = performance.now();
      const ran = await runTasks(tasks, this.#runOptions());
      seconds += (performance.now() - started) / 1000;
      this.#report(ran.failures);
      lastError = ran.failures.at(-1)?.error ?? lastError;
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
      ...scheduler.feedback(experiences),
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
      const pending = { step: this.#step + 1, eids: kept.map((e) => e.info.eid) };
      await this.#writeState({ ...this.#saved, pending });
      const put = await buffer.put(kept);
      metrics["buffer/accepted"] = put.accepted;
      metrics["buffer/rejected"] = put.rejected;
    }
    metrics["pipeline/kept"] = kept.length;
    const allFailed = kept.length === 0 && failed === tasksDrawn;
    this.#empty = allFailed
      ? { steps: this.#empty.steps + 1, reason: `every task failed (last error: ${lastError})` }
      : { steps: 0, reason: "" };
    this.#step++;
    if (kept.length === 0 && !allFailed) {
      this.#filtered++;
      this.options.log(
        `explore step ${this.#step}: every group was filtered by the experience pipeline; ` +
          `going on (${this.#filtered} step(s) filtered so far)`,
      );
    }
    metrics["pipeline/filtered_steps_total"] = this.#filtered;
    const cursor: ExplorerCursor = {
      step: this.#step,
      policyVersion: metrics["explorer/policy_version"],
    };
    const dropped = [...this.#history, cursor].slice(0, -CURSOR_HISTORY);
    this.#history = [...this.#history, cursor].slice(-CURSOR_HISTORY);
    await Deno.mkdir(`${this.options.stateDir}/${TASK_SCHEDULE_DIR}`, { recursive: true });
    await writeAtomic(this.#schedulePath(this.#step), JSON.stringify(scheduler.state()) + "\n");
    this.#saved = { ...cursor, history: this.#history };
    await this.#writeState(this.#saved);
    for (const old of dropped) {
      await Deno.remove(this.#schedulePath(old.step)).catch((err) => {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      });
    }
    return { drew: true, kept, metrics };
  }

  /** Writes the cursor file. */
  async #writeState(state: ExplorerState): Promise<void> {
    const { stateDir } = this.options;
    await Deno.mkdir(stateDir, { recursive: true });
    await writeAtomic(`${stateDir}/${EXPLORER_STATE_FILE}`, JSON.stringify(state) + "\n");
  }

  /** The scheduler's state file of explore step `step`. */
  #schedulePath(step: number): string {
    return `${this.options.stateDir}/${TASK_SCHEDULE_DIR}/step_${step}.json`;
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

  #runOptions(): RunTasksOptions {
    const { model, runnerNum, maxTimeout, maxRetryTimes, signal, services, workflows, log } =
      this.options;
    return { model, runnerNum, maxTimeout, maxRetryTimes, signal, services, workflows, log };
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
