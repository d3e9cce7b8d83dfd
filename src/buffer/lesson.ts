/**
 * Marin-style lesson graduation for one taskset of a mix: a rolling pass rate over the last
 * `window` explore steps that drew from it, and its status. A `waiting` lesson enters the mix
 * once its prerequisite's rolling pass rate reaches `unlockPassRate` (or the prerequisite
 * graduated or ran out); an `active` one graduates, leaving the mix, once its own rolling pass
 * rate over a full window reaches `graduatePassRate`. Holds no tasks; the scheduler asks it.
 */

/** A lesson as configured (YAML `lesson` of a taskset). */
export interface LessonConfig {
  /** Steps of the rolling pass rate. */
  window: number;
  /** Leave the mix once the rolling pass rate reaches this; absent: never graduates. */
  graduatePassRate?: number;
  /** Stay out of the mix until this taskset (by name) reaches `unlockPassRate`. */
  requires?: string;
  /** The prerequisite's rolling pass rate that lets this lesson in. */
  unlockPassRate?: number;
}

/** Where a lesson stands. */
export type LessonStatus = "waiting" | "active" | "graduated";

/** A lesson's saved state. */
export interface LessonState {
  status: LessonStatus;
  /** Pass rates of the last `window` steps that drew from it, oldest first. */
  recent: number[];
}

/** One taskset's lesson: its rolling pass rate and status. */
export class Lesson {
  #status: LessonStatus;
  #recent: number[] = [];

  constructor(readonly config: LessonConfig) {
    this.#status = config.requires === undefined ? "active" : "waiting";
  }

  get status(): LessonStatus {
    return this.#status;
  }

  /** The mean of the recent pass rates; undefined before any step drew from it. */
  get rollingPassRate(): number | undefined {
    const r = this.#recent;
    return r.length === 0 ? undefined : r.reduce((a, b) => a + b, 0) / r.length;
  }

  /** Whether the rolling window is full and its mean is at least `rate`. */
  reached(rate: number): boolean {
    return this.#recent.length === this.config.window && this.rollingPassRate! >= rate;
  }

  /** Adds one step's pass rate; graduates when the rule says so. True when it just graduated. */
  record(passRate: number): boolean {
    this.#recent = [...this.#recent, passRate].slice(-this.config.window);
    const { graduatePassRate } = this.config;
    if (
      this.#status === "active" && graduatePassRate !== undefined && this.reached(graduatePassRate)
    ) {
      this.#status = "graduated";
      return true;
    }
    return false;
  }

  /** Enters the mix when the prerequisite `done` (graduated or out of tasks) or reached its rate. */
  checkUnlock(prerequisite: Lesson, done: boolean): boolean {
    if (this.#status !== "waiting") return false;
    if (done || prerequisite.reached(this.config.unlockPassRate ?? 0)) {
      this.#status = "active";
      return true;
    }
    return false;
  }

  state(): LessonState {
    return { status: this.#status, recent: [...this.#recent] };
  }

  restore(state: LessonState): void {
    this.#status = state.status;
    this.#recent = [...state.recent];
  }
}
