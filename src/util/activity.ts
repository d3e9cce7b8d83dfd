/**
 * What the process is doing right now, as a stack of named activities (a run's stage, a graph's
 * compilation, kernel tuning), each with optional counts (`12/40`). Long work opens one so that a
 * quiet stretch can be explained: the CLI's heartbeat (`src/monitor/heartbeat.ts`, on its own
 * thread, so it speaks while this one is busy compiling) prints them when nothing was printed
 * for a while, reading their description from {@link ACTIVITY_BOARD}, shared memory kept up to
 * date on every change. Holds no timers and prints nothing.
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

/** Bytes of the activities' description on the board (longer text is cut). */
const BOARD_TEXT_BYTES = 1024;

/**
 * Shared memory: float64 0 is when the innermost activity began (`Date.now()` ms, 0 when none),
 * int32 2 the byte length of the description (UTF-8) that follows at byte 16.
 */
export const ACTIVITY_BOARD: SharedArrayBuffer = new SharedArrayBuffer(16 + BOARD_TEXT_BYTES);
const encoder = new TextEncoder();

/** Writes the open activities' description to the board. */
function publish(): void {
  const started = new Float64Array(ACTIVITY_BOARD, 0, 1);
  const length = new Int32Array(ACTIVITY_BOARD, 8, 1);
  const innermost = open[open.length - 1];
  started[0] = innermost ? Date.now() - (performance.now() - innermost.started) : 0;
  const { written } = encoder.encodeInto(
    open.map(describeActivity).join(": "),
    new Uint8Array(ACTIVITY_BOARD, 16, BOARD_TEXT_BYTES),
  );
  Atomics.store(length, 0, written);
}

/** The activities' description on `board` and when the innermost began (undefined: none). */
export function readActivityBoard(
  board: SharedArrayBuffer,
): { text: string; started: number } | undefined {
  const started = new Float64Array(board, 0, 1)[0];
  if (started === 0) return undefined;
  const length = Atomics.load(new Int32Array(board, 8, 1), 0);
  const text = new TextDecoder().decode(new Uint8Array(board, 16, length).slice());
  return { text, started };
}

/** An open activity; `end()` (or leaving a `using` block) closes it. */
export class ActivityHandle implements Disposable {
  constructor(readonly activity: Activity) {}

  /** Records progress: `done` units (of `total`, when given) and a note on the current one. */
  progress(done: number, note?: string, total?: number): void {
    this.activity.done = done;
    this.activity.note = note;
    if (total !== undefined) this.activity.total = total;
    publish();
  }

  /** Closes the activity (and any still open inside it). */
  end(): void {
    const at = open.indexOf(this.activity);
    if (at >= 0) open.splice(at);
    publish();
  }

  [Symbol.dispose](): void {
    this.end();
  }
}

/** Opens an activity inside the current ones; `total` is the count of units, when known. */
export function beginActivity(label: string, total?: number): ActivityHandle {
  const activity: Activity = { label, started: performance.now(), done: 0, total };
  open.push(activity);
  publish();
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
