/**
 * What the process is doing right now, as a stack of named activities (a run's stage, a graph's
 * compilation, kernel tuning), each with optional counts (`12/40`). Long work opens one so that a
 * quiet stretch can be explained: the CLI's heartbeat (`src/monitor/heartbeat.ts`) prints the
 * innermost activities when nothing was printed for a while. Holds no timers and prints nothing.
 */

/** One activity in progress. */
export interface Activity {
  /** What is being done, e.g. `compiling kernels of graph "train_step"`. */
  readonly label: string;
  /** `performance.now()` when it began. */
  readonly started: number;
  /** Units done so far (shown with `total` as `done/total`). */
  done: number;
  /** Units in all, when known. */
  total?: number;
  /** A short word on the current unit, e.g. the shape being tuned. */
  note?: string;
}

const open: Activity[] = [];

/** An open activity; `end()` (or leaving a `using` block) closes it. */
export class ActivityHandle implements Disposable {
  constructor(readonly activity: Activity) {}

  /** Records progress: `done` units (of `total`, when given) and a note on the current one. */
  progress(done: number, note?: string, total?: number): void {
    this.activity.done = done;
    this.activity.note = note;
    if (total !== undefined) this.activity.total = total;
  }

  /** Closes the activity (and any still open inside it). */
  end(): void {
    const at = open.indexOf(this.activity);
    if (at >= 0) open.splice(at);
  }

  [Symbol.dispose](): void {
    this.end();
  }
}

/** Opens an activity inside the current ones; `total` is the count of units, when known. */
export function beginActivity(label: string, total?: number): ActivityHandle {
  const activity: Activity = { label, started: performance.now(), done: 0, total };
  open.push(activity);
  return new ActivityHandle(activity);
}

/** The open activities, outermost first. */
export function openActivities(): readonly Activity[] {
  return open;
}

/** An activity as text: `label 12/40 (note)`, counts and note when present. */
export function describeActivity(activity: Activity): string {
  const count = activity.total !== undefined
    ? ` ${activity.done}/${activity.total}`
    : activity.done > 0
    ? ` ${activity.done}`
    : "";
  return `${activity.label}${count}${activity.note ? ` (${activity.note})` : ""}`;
}
