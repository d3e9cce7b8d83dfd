/**
 * `<runDir>/metrics.jsonl`: one JSON object per step, `{"step": N, "stage": "sft", "time": <unix
 * s>, ...}` with flat metric keys, appended a whole line at a time. `stage` names the stage of a
 * run of several (steps count per stage, as in Trinity); rows of one-stage runs and of older
 * runs may have none. Non-finite numbers are written as null. The reader skips unreadable lines
 * (a kill can leave a partial last one) and counts them.
 */

import { writeAtomic } from "../util/write_atomic.ts";
import { AppendFile } from "./append_file.ts";

/**
 * One row of metrics.jsonl as read back, without its stage (`MetricsFile.stages`); a null value
 * was NaN or infinite when logged.
 */
export interface MetricsRow {
  step: number;
  time: number;
  [key: string]: number | null;
}

/** The metric values of a row (without step and time). */
export function rowMetrics(row: MetricsRow): Record<string, number | null> {
  const { step: _step, time: _time, ...metrics } = row;
  return metrics;
}

/** Keys of a row that are not metrics. */
const RESERVED = ["step", "time", "stage"];

/** How `MetricsLog.open` treats an existing file. */
export interface MetricsLogOptions {
  /**
   * On resume, drop the rows with `step` greater than this (of `truncateStage` when given), so
   * no step appears twice.
   */
  truncateAfterStep?: number;
  /**
   * The stage being resumed: rows of stages before it stay, its rows up to `truncateAfterStep`
   * stay, rows of any stage after it go.
   */
  truncateStage?: string;
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
    await tidyForResume(path, options);
    return new MetricsLog(await AppendFile.open(path));
  }

  /**
   * Appends one row of `stage` (when given); `step`, `time` and `stage` are reserved and cannot
   * be metric keys.
   */
  async append(
    step: number,
    metrics: Record<string, number>,
    time = Date.now() / 1000,
    stage?: string,
  ) {
    for (const reserved of RESERVED) {
      if (reserved in metrics) {
        throw new Error(`Cannot log metrics: "${reserved}" is reserved, rename the metric`);
      }
    }
    // JSON.stringify writes NaN and ±Infinity as null.
    const line =
      JSON.stringify({ step, ...(stage === undefined ? {} : { stage }), time, ...metrics }) +
      "\n";
    await this.file.append(new TextEncoder().encode(line));
  }

  /** Closes the file. */
  close(): void {
    this.file.close();
  }
}

/** The rows of a metrics file, their stages, and how many non-empty lines could not be read. */
export interface MetricsFile {
  rows: MetricsRow[];
  /** The stage of each row (same index), undefined where the row names none. */
  stages: (string | undefined)[];
  unreadable: number;
}

/** Reads a metrics.jsonl file; throws `Deno.errors.NotFound` when it is missing. */
export async function readMetrics(path: string): Promise<MetricsFile> {
  const result: MetricsFile = { rows: [], stages: [], unreadable: 0 };
  for (const line of (await Deno.readTextFile(path)).split("\n")) {
    if (line.trim() === "") continue;
    const parsed = parseRow(line);
    if (!parsed) {
      result.unreadable++;
      continue;
    }
    result.rows.push(parsed.row);
    result.stages.push(parsed.stage);
  }
  return result;
}

/**
 * A line as a row and its stage, or undefined when it is not an object with a numeric step and
 * time, numbers or nulls elsewhere, and a string stage if any.
 */
function parseRow(line: string): { row: MetricsRow; stage?: string } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const { stage, ...row } = value as Record<string, unknown>;
  if (typeof row.step !== "number" || typeof row.time !== "number") return undefined;
  if (stage !== undefined && typeof stage !== "string") return undefined;
  const numeric = Object.values(row).every((v) => v === null || typeof v === "number");
  return numeric ? { row: row as MetricsRow, stage } : undefined;
}

/** Rewrites `path` without a partial last line and without the rows a resume replaces. */
async function tidyForResume(path: string, options: MetricsLogOptions): Promise<void> {
  let text;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return;
    throw err;
  }
  const lines = text.split("\n");
  lines.pop(); // "" after the last newline, or a partial line
  const { truncateAfterStep: after, truncateStage: resumed } = options;
  let past = false; // a row of the resumed stage was seen, so later stages come after it
  const kept = lines.filter((line) => {
    const parsed = parseRow(line);
    if (after === undefined || parsed === undefined) return true;
    if (resumed === undefined) return parsed.row.step <= after;
    if (parsed.stage === resumed) {
      past = true;
      return parsed.row.step <= after;
    }
    return !past;
  });
  const tidy = kept.map((line) => line + "\n").join("");
  if (tidy !== text) await writeAtomic(path, tidy);
}
