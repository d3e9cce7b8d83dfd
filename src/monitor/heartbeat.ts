/**
 * The heartbeat of a long command: when nothing was printed for `quietLimit` seconds (default
 * 8, checked every second: no silence reaches 10 s) while some work is under way (an idle server
 * stays quiet), one line says what it is doing (the open activities of `src/util/activity.ts`,
 * innermost last) and for how long, e.g. `... stage sft: compiling kernels of graph "train"
 * 34/120 (22s)`; an updating line on a terminal. It runs in a worker (`heartbeat_worker.ts`) that
 * reads the activities and the time of the last line from shared memory, so it speaks while the
 * main thread is blocked in a synchronous call (a shader compile on a CPU adapter).
 */

import { ACTIVITY_BOARD } from "../util/activity.ts";
import { STATUS_BOARD, STDERR_SINK } from "../util/status_lines.ts";
import { formatDuration } from "./console_progress.ts";

/** The heartbeat's line for the activities' `text` (begun at `started`, ms) at `now` (ms). */
export function heartbeatLine(
  activity: { text: string; started: number } | undefined,
  now: number,
) {
  if (!activity) return "... working";
  return `... ${activity.text} (${formatDuration((now - activity.started) / 1000)})`;
}

/** What the worker is started with. */
export interface HeartbeatSetup {
  status: SharedArrayBuffer;
  activity: SharedArrayBuffer;
  quietLimit: number;
  isTerminal: boolean;
  columns: number;
}

/** A running heartbeat. */
export interface Heartbeat {
  stop(): void;
}

/** Starts the heartbeat (see the file comment). */
export function startHeartbeat(quietLimit = 8): Heartbeat {
  const worker = new Worker(new URL("./heartbeat_worker.ts", import.meta.url), { type: "module" });
  const setup: HeartbeatSetup = {
    status: STATUS_BOARD,
    activity: ACTIVITY_BOARD,
    quietLimit,
    isTerminal: STDERR_SINK.isTerminal,
    columns: STDERR_SINK.columns(),
  };
  worker.postMessage(setup);
  return { stop: () => worker.terminate() };
}
