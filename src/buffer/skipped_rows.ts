/** The log lines of the rows a taskset skipped at load (bad rows are reported, never fatal). */

import type { Taskset } from "./taskset.ts";

/** Logs the rows `taskset` skipped (at most five, then a count). */
export function logSkipped(taskset: Taskset, log: (line: string) => void): void {
  const skipped = taskset.skippedRows;
  for (const w of skipped.slice(0, 5)) {
    log(
      `skipped ${w.path} ${w.line !== undefined ? `line ${w.line}` : `row ${w.row}`}: ${w.reason}`,
    );
  }
  if (skipped.length > 5) {
    log(`skipped ${skipped.length - 5} more rows of ${taskset.files.join(", ")}`);
  }
}
