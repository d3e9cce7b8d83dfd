/**
 * The TasksetScheduler (Trinity's name): the explorer's tasks from one or several tasksets. Each
 * batch is split among the tasksets in the mix by weight (smooth weighted round robin: over many
 * steps each gets its weight's share; Trinity's default, the tasksets' sizes, when no weight is
 * set); each taskset's selector picks its rows. Feedback (the mean reward of each drawn task's
 * rollouts) goes back to the selectors and to the Marin-style lessons (`lesson.ts`) that let a
 * taskset into the mix or graduate it out. The run's data ends when no taskset is left in the
 * mix. Its state (cursors, selector states, credits, lessons) is saved with each explore step.
 */

import type { Experience } from "./experience.ts";
import { Lesson, type LessonConfig, type LessonState } from "./lesson.ts";
import type { Task } from "./task.ts";
import type { Taskset, TasksetState } from "./taskset.ts";

/** One taskset of the mix. */
export interface ScheduledTaskset {
  /** Name in task ids (when there are several) and metric keys. */
  name: string;
  taskset: Taskset;
  /** Share of the draws while in the mix; default: the taskset's size. */
  weight?: number;
  /** Graduation and prerequisite; absent: always in the mix until it runs out. */
  lesson?: LessonConfig;
  /** Numeric row keys whose values among the drawn tasks are logged (`feature_keys`). */
  featureKeys?: readonly string[];
}

/** The scheduler's saved state. */
export interface TaskScheduleState {
  tasksets: TasksetState[];
  /** Round-robin credit of each taskset. */
  credits: number[];
  lessons: LessonState[];
}

/** Where a drawn task came from. */
interface Drawn {
  taskset: number;
  index: number;
}

/** Hands out the explorer's tasks (see the file comment). */
export class TasksetScheduler {
  readonly #lessons: Lesson[];
  #credits: number[];
  /** The tasks drawn since the last feedback, by task id. */
  #drawn = new Map<string, Drawn>();
  /** Metrics of the draws since the last feedback. */
  #drawMetrics: Record<string, number> = {};

  constructor(readonly entries: readonly ScheduledTaskset[], readonly log: (line: string) => void) {
    if (entries.length === 0) throw new Error("Cannot schedule tasks: no taskset");
    this.#credits = entries.map(() => 0);
    this.#lessons = entries.map((e) => new Lesson(e.lesson ?? { window: 1 }));
    entries.forEach((e) => {
      const requires = e.lesson?.requires;
      if (requires !== undefined && !entries.some((o) => o.name === requires && o !== e)) {
        throw new Error(
          `Cannot schedule taskset "${e.name}": lesson.requires is "${requires}"; expected the name of another taskset (${
            entries.map((o) => o.name).join(", ")
          })`,
        );
      }
    });
  }

  /** True when some taskset is in the mix with tasks left. */
  get active(): boolean {
    return this.#inMix().length > 0;
  }

  /**
   * The next `batchSize` tasks, split among the tasksets in the mix; null when none is left.
   * With several tasksets a task id is `<name>/<epoch>.<position>`.
   */
  nextBatch(batchSize: number): Task[] | null {
    const mix = this.#inMix();
    if (mix.length === 0) return null;
    const weights = mix.map((k) => this.entries[k].weight ?? this.entries[k].taskset.size);
    const total = weights.reduce((a, b) => a + b, 0);
    const counts = this.entries.map(() => 0);
    for (let slot = 0; slot < batchSize; slot++) {
      let best = 0;
      mix.forEach((k, j) => {
        this.#credits[k] += weights[j];
        if (this.#credits[k] > this.#credits[mix[best]]) best = j;
      });
      this.#credits[mix[best]] -= total;
      counts[mix[best]]++;
    }
    const tasks: Task[] = [];
    counts.forEach((count, k) => {
      if (count === 0) return;
      const { name, taskset, featureKeys = [] } = this.entries[k];
      const drawn = taskset.nextBatch(count) ?? [];
      const estimate = taskset.taskSelector.estimate?.(drawn.map((t) => t.index));
      if (estimate) this.#addQuantiles(`tasks/${name}/selected_pass_estimate`, estimate);
      for (const key of featureKeys) {
        const values = drawn.map((t) => t.rawTask[key]).filter((v) => typeof v === "number");
        this.#addQuantiles(`tasks/${name}/selected_${key}`, values as number[]);
      }
      this.#drawMetrics[`tasks/${name}/drawn`] = (this.#drawMetrics[`tasks/${name}/drawn`] ?? 0) +
        drawn.length;
      for (const task of drawn) {
        const id = this.entries.length === 1 ? task.taskId : `${name}/${task.taskId}`;
        this.#drawn.set(id, { taskset: k, index: task.index });
        tasks.push(id === task.taskId ? task : { ...task, taskId: id });
      }
    });
    return tasks;
  }

  /**
   * Feedback from one explore step's experiences (before any filter): each drawn task's mean
   * reward (a null reward counts 0) to its selector and its taskset's lesson. Returns the step's
   * task-selection metrics.
   */
  feedback(experiences: readonly Experience[]): Record<string, number> {
    const rewards = new Map<string, number[]>();
    for (const exp of experiences) {
      rewards.set(exp.info.taskId, [...rewards.get(exp.info.taskId) ?? [], exp.reward ?? 0]);
    }
    const byTaskset = this.entries.map(() => ({ indices: [] as number[], values: [] as number[] }));
    for (const [id, values] of rewards) {
      const drawn = this.#drawn.get(id);
      if (!drawn) continue;
      byTaskset[drawn.taskset].indices.push(drawn.index);
      byTaskset[drawn.taskset].values.push(mean(values));
    }
    const metrics = this.#drawMetrics;
    byTaskset.forEach(({ indices, values }, k) => {
      if (indices.length === 0) return;
      this.entries[k].taskset.taskSelector.update(indices, values);
      const passRate = mean(values);
      metrics[`tasks/${this.entries[k].name}/pass_rate`] = passRate;
      if (this.#lessons[k].record(passRate)) {
        this.log(`taskset ${this.entries[k].name} graduated (rolling pass rate ${passRate})`);
      }
    });
    this.#unlock();
    this.entries.forEach(({ name }, k) => {
      const rolling = this.#lessons[k].rollingPassRate;
      if (rolling !== undefined) metrics[`tasks/${name}/rolling_pass_rate`] = rolling;
      metrics[`tasks/${name}/in_mix`] = this.#inMix().includes(k) ? 1 : 0;
    });
    metrics["tasks/graduated"] = this.#lessons.filter((l) => l.status === "graduated").length;
    this.#drawn = new Map();
    this.#drawMetrics = {};
    return metrics;
  }

  /** Everything needed to continue exactly here. */
  state(): TaskScheduleState {
    return {
      tasksets: this.entries.map((e) => e.taskset.state()),
      credits: [...this.#credits],
      lessons: this.#lessons.map((l) => l.state()),
    };
  }

  /** Back to a saved state; throws when it was saved for another list of tasksets. */
  restore(state: TaskScheduleState): void {
    if (state.tasksets.length !== this.entries.length) {
      throw new Error(
        `Cannot restore the task schedule: it was saved with ${state.tasksets.length} tasksets; this run has ${this.entries.length}`,
      );
    }
    this.entries.forEach((e, k) => e.taskset.restore(state.tasksets[k]));
    this.#credits = [...state.credits];
    this.#lessons.forEach((l, k) => l.restore(state.lessons[k]));
  }

  /** Indices of the tasksets in the mix that still have tasks. */
  #inMix(): number[] {
    return this.entries.flatMap((e, k) =>
      this.#lessons[k].status === "active" && !e.taskset.exhausted ? [k] : []
    );
  }

  /** Lets waiting lessons in whose prerequisite reached its rate, graduated or ran out. */
  #unlock(): void {
    this.entries.forEach((e, k) => {
      const requires = e.lesson?.requires;
      if (requires === undefined) return;
      const p = this.entries.findIndex((o) => o.name === requires);
      const done = this.#lessons[p].status === "graduated" || this.entries[p].taskset.exhausted;
      if (this.#lessons[k].checkUnlock(this.#lessons[p], done)) {
        this.log(
          `taskset ${e.name} entered the mix (${requires} rolling pass rate ${
            this.#lessons[p].rollingPassRate
          })`,
        );
      }
    });
  }

  /** Mean, 10th, 50th and 90th percentile of `values` under `prefix`. */
  #addQuantiles(prefix: string, values: readonly number[]): void {
    if (values.length === 0) return;
    const sorted = [...values].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
    Object.assign(this.#drawMetrics, {
      [`${prefix}_mean`]: mean(sorted),
      [`${prefix}_p10`]: at(0.1),
      [`${prefix}_p50`]: at(0.5),
      [`${prefix}_p90`]: at(0.9),
    });
  }
}

function mean(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}
