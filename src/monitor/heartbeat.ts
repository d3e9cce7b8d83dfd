/**
 * The heartbeat of a long command: when nothing was printed for `quietSeconds` (default 10), one
 * updating line says what the process is doing (the open activities of `src/util/activity.ts`,
 * innermost last) and for how long, e.g. `... stage sft: compiling kernels of graph "train_step"
 * 34/120 (22 s)`. Runs on a timer that does not keep the process alive; it cannot speak while a
 * synchronous call blocks the event loop, so such calls are preceded by a line of their own.
 */

import { type Activity, describeActivity, openActivities } from "../util/activity.ts";
import { printUpdatingLine, quietSeconds } from "../util/status_lines.ts";
import { formatDuration } from "./console_progress.ts";

/** The heartbeat's line for `activities` at time `now` (ms, `performance.now()`). */
export function heartbeatLine(activities: readonly Activity[], now: number): string {
  if (activities.length === 0) return "... working";
  const innermost = activities[activities.length - 1];
  const seconds = (now - innermost.started) / 1000;
  return `... ${activities.map(describeActivity).join(": ")} (${formatDuration(seconds)})`;
}

/** A running heartbeat. */
export interface Heartbeat {
  stop(): void;
}

/** Starts the heartbeat (see the file comment). */
export function startHeartbeat(quietLimit = 10): Heartbeat {
  const id = setInterval(() => {
    if (quietSeconds() >= quietLimit) {
      printUpdatingLine(heartbeatLine(openActivities(), performance.now()));
    }
  }, 1000);
  Deno.unrefTimer(id);
  return { stop: () => clearInterval(id) };
}
