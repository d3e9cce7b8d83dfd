/**
 * `<runDir>/metrics.jsonl`: one JSON object per step, `{"step": N, "time": <unix s>, ...}` with
 * flat metric keys, appended a whole line at a time. Non-finite numbers are written as null.
 * The reader skips unreadable lines (a kill can leave a partial last one) and counts them.
 */

import { writeAtomic } from "../util/write_atomic.ts";
import { AppendFile } from "./append_file.ts";

/** One row of metrics.jsonl; a null value was NaN or infinite when logged. */
export interface MetricsRow {
  step: number;
  time: number;
  [key: string]: number | null;
}

/** How `MetricsLog.open` treats an existing file. */
export interface MetricsLogOptions {
  /** On resume, drop the rows with `step` greater than this, so no step appears twice. */
  truncateAfterStep?: number;
}

/** The metrics file name inside a run directory. */
export const METRICS_FILE = "metrics.jsonl";

/** Appends metric rows to `<runDir>/metrics.jsonl`; an existing file is continued. */
export class MetricsLog {
  private constructor(private readonly file: AppendFile) {}

  /** The file's path. */
  get path(): string {
    return this.file.path;
  }

  /**
   * Creates `runDir` if needed and opens its metrics file for appending. A partial last line
   * (left by a kill) is dropped first, and so are rows after `truncateAfterStep` when given.
   */
  static async open(runDir: string, options: MetricsLogOptions = {}): Promise<MetricsLog> {
    await Deno.mkdir(runDir, { recursive: true });
    const path = `${runDir}/${METRICS_FILE}`;
    await tidyForResume(path, options.truncateAfterStep);
    return new MetricsLog(await AppendFile.open(path));
  }

  /** Appends one row; `step` and `time` are reserved and cannot be metric keys. */
  async append(step: number, metrics: Record<string, number>, time = Date.now() / 1000) {
    for (const reserved of ["step", "time"]) {
      if (reserved in metrics) {
        throw new Error(`Cannot log metrics: "${reserved}" is reserved, rename the metric`);
      }
    }
    // JSON.stringify writes NaN and ±Infinity as null.
    const line = JSON.stringify({ step, time, ...metrics }) + "\n";
    await this.file.append(new TextEncoder().encode(line));
  }

  /** Closes the file. */
  close(): void {
    this.file.close();
  }
}

/** The rows of a metrics file and how many non-empty lines could not be read. */
export interface MetricsFile {
  rows: MetricsRow[];
  unreadable: number;
}

/** Reads a metrics.jsonl file; throws `Deno.errors.NotFound` when it is missing. */
export async function readMetrics(path: string): Promise<MetricsFile> {
  const result: MetricsFile = { rows: [], unreadable: 0 };
  for (const line of (await Deno.readTextFile(path)).split("\n")) {
    if (line.trim() === "") continue;
    const row = parseRow(line);
    if (row) result.rows.push(row);
    else result.unreadable++;
  }
  return result;
}

/** A line as a row, or undefined when it is not an object with a numeric step and time. */
function parseRow(line: string): MetricsRow | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const row = value as Record<string, unknown>;
  if (typeof row.step !== "number" || typeof row.time !== "number") return undefined;
  const numeric = Object.values(row).every((v) => v === null || typeof v === "number");
  return numeric ? row as MetricsRow : undefined;
}

/** Rewrites `path` without a partial last line and without rows after `afterStep`. */
async function tidyForResume(path: string, afterStep: number | undefined): Promise<void> {
  let text;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return;
    throw err;
  }
  const lines = text.split("\n");
  lines.pop(); // "" after the last newline, or a partial line
  const kept = lines.filter((line) => {
    const step = parseRow(line)?.step;
    return afterStep === undefined || step === undefined || step <= afterStep;
  });
  const tidy = kept.map((line) => line + "\n").join("");
  if (tidy !== text) await writeAtomic(path, tidy);
}
