/**
 * The Evaluator: runs every task of each eval taskset `repeat_times` times (k, its rollout `n`)
 * on a rollout model and logs `eval/<name>/...` at the policy version it measured: the reward
 * statistics, the mean of each workflow metric, `mean@k` (mean accuracy over the k samples of
 * each task) and `best@k` (the share of tasks with an accurate sample, when k > 1). It decides
 * when an evaluation is due (`eval_on_startup`, `eval_interval`); it trains and explores nothing.
 * One evaluator serves every mode: both, explore, train and bench.
 */

import { beginActivity } from "../util/activity.ts";
import type { Taskset } from "../buffer/taskset.ts";
import { summarizeExperiences } from "./summarize.ts";
import { runTasks, type RunTasksOptions, type TaskFailure } from "./workflow_runner.ts";

/** An eval taskset with its name (metric keys `eval/<name>/...`). */
export interface EvalTaskset {
  name: string;
  taskset: Taskset;
  /** Samples per task (the taskset's rollout `n`, Trinity's eval `repeat_times`). */
  repeatTimes: number;
  /** Its `reward_fn_args` (absent: the run options' services' own). */
  rewardFnArgs?: Readonly<Record<string, unknown>>;
}

/** When evaluations are due. */
export interface EvalSchedule {
  /** Evaluate every this many train steps (0: only at startup and the end). */
  interval: number;
  /** Evaluate the initial weights of a fresh stage (version 0). */
  onStartup: boolean;
  /** The version the stage starts at (a resumed stage's checkpoint step). */
  startVersion: number;
}

/** Options of an {@link Evaluator}. */
export interface EvaluatorOptions {
  evalTasksets: readonly EvalTaskset[];
  /** How tasks run (the rollout model being evaluated, runners, timeout, retries). */
  run: RunTasksOptions;
  schedule: EvalSchedule;
  /** Receives each evaluation's metrics at the version it measured. */
  logRow: (version: number, metrics: Record<string, number>) => Promise<void>;
  /** Receives one line per failed task. */
  log: (line: string) => void;
}

/** Evaluates a rollout model on the eval tasksets when due. */
export class Evaluator {
  #evaluated = -1;
  #last: Record<string, number> = {};

  constructor(readonly options: EvaluatorOptions) {}

  /** The last evaluation's metrics (empty before the first). */
  get last(): Record<string, number> {
    return this.#last;
  }

  /** Whether weights of version `version` are due an evaluation (see {@link EvalSchedule}). */
  due(version: number): boolean {
    const { interval, onStartup, startVersion } = this.options.schedule;
    if (this.options.evalTasksets.length === 0 || version === this.#evaluated) return false;
    if (version === startVersion && version === 0) return onStartup;
    return interval > 0 && version % interval === 0 && version !== startVersion;
  }

  /** Evaluates version `version` when it is due. */
  async maybeEvaluate(version: number): Promise<void> {
    if (this.due(version)) await this.evaluate(version);
  }

  /** The evaluation at the end of a stage: version `version` unless it was just evaluated. */
  async finalEvaluate(version: number): Promise<void> {
    if (this.options.evalTasksets.length && version !== this.#evaluated) {
      await this.evaluate(version);
    }
  }

  /** Evaluates now, logging the metrics at `version`; returns them. */
  async evaluate(version: number): Promise<Record<string, number>> {
    const metrics: Record<string, number> = {};
    for (const { name, taskset, repeatTimes, rewardFnArgs } of this.options.evalTasksets) {
      const start = taskset.state();
      const tasks = taskset.nextBatch(taskset.size) ?? [];
      taskset.restore({ ...start, epoch: 0, index: 0 });
      const started = performance.now();
      using _evaluating = beginActivity(`evaluating ${name} (${tasks.length} tasks)`);
      const { experiences, failures } = await runTasks(tasks, this.#runOptions(rewardFnArgs));
      this.#report(failures);
      const summary = summarizeExperiences(`eval/${name}`, experiences);
      const accuracy = summary[`eval/${name}/accuracy`];
      if (accuracy !== undefined) summary[`eval/${name}/mean@${repeatTimes}`] = accuracy;
      Object.assign(metrics, summary, {
        [`eval/${name}/failed_tasks`]: failures.length,
        [`time/eval_${name}_s`]: (performance.now() - started) / 1000,
      });
    }
    this.#evaluated = version;
    this.#last = metrics;
    await this.options.logRow(version, metrics);
    return metrics;
  }

  #runOptions(rewardFnArgs?: Readonly<Record<string, unknown>>): RunTasksOptions {
    const { run, log } = this.options;
    const withLog = { log, ...run };
    return rewardFnArgs ? { ...withLog, services: { ...run.services, rewardFnArgs } } : withLog;
  }

  #report(failures: readonly TaskFailure[]): void {
    for (const f of failures) {
      this.options.log(
        `eval task ${f.taskId} (workflow ${f.workflow}) failed after ${f.attempts} attempt(s): ${f.error}`,
      );
    }
  }
}
