/**
 * The Taskset: the rows of a JSONL file, a parquet file, a HF-style dataset directory or an
 * SQLite table (Trinity's `storage_type: sql`, an `sqlite:///` path), handed
 * out as Tasks in batches by a selector (sequential, shuffle, random) over `totalEpochs`, with a
 * cursor that can be saved and restored so a resumed run draws exactly what it would have. Bad
 * rows are skipped and listed. Loads the whole split into memory; does not parse YAML (the
 * config layer maps Trinity's snake_case keys onto {@link TasksetConfig}).
 */

import { InputError } from "../util/input_error.ts";
import { mulberry32 } from "../util/random.ts";
import { findSplitFiles } from "./dataset_files.ts";
import { readJsonlLines, readParquetRows, type ReadWarning } from "./experience_io.ts";
import { isSqliteUrl, readSqliteRows, sqliteFile } from "./sqlite_rows.ts";
import { type RolloutArgs, rowProblem, type Task, type TaskFormat } from "./task.ts";

/** Known selectors: the order of tasks within an epoch. */
export const SELECTORS = ["sequential", "shuffle", "random"] as const;

/**
 * How tasks are drawn in each epoch of `size` draws: `sequential` in row order; `shuffle` a
 * permutation seeded by (seed, epoch), so different each epoch; `random` `size` draws with
 * replacement seeded by (seed, epoch).
 */
export type Selector = typeof SELECTORS[number];

/** A taskset as configured (YAML `buffer.explorer_input.taskset`, keys in camelCase here). */
export interface TasksetConfig {
  /**
   * A `.jsonl` or `.parquet` file, a dataset directory (see {@link findSplitFiles}), or an
   * `sqlite:///file.db` URL whose `table` holds the rows (see {@link readSqliteRows}).
   */
  path: string;
  /** Table of an `sqlite:///` path (Trinity's taskset `name`). */
  table?: string;
  /** Split to read from a directory (default "train"). */
  split?: string;
  /** Subset (config) folder of a Hub dataset directory (`subset_name`). */
  subsetName?: string;
  /** Row keys (`format`); `promptKey` defaults to "prompt". */
  format?: Partial<TaskFormat>;
  /** Default "sequential". */
  selector?: Selector;
  /** Passes over the data (`total_epochs`; default 1). */
  totalEpochs?: number;
  /** Seed of `shuffle` and `random` (default 42). */
  seed?: number;
  /** Workflow of every task (`default_workflow_type`). */
  defaultWorkflowType: string;
  /** Reward fn of every task (`default_reward_fn_type`). */
  defaultRewardFnType?: string;
  /** `rollout_args`; `n` defaults to 1. */
  rolloutArgs?: Partial<RolloutArgs>;
  /** `workflow_args`. */
  workflowArgs?: Record<string, unknown>;
  /** Mark tasks as evaluation tasks (`is_eval`). */
  isEval?: boolean;
  /**
   * A further check of each row at load (e.g. that the tokenizer encodes its prompt): the
   * reason to skip it, or undefined. Skipped rows are listed with their file line or row.
   */
  rowCheck?: (row: Readonly<Record<string, unknown>>, format: TaskFormat) => string | undefined;
}

/** The cursor of a taskset, as saved with a run; JSON-serialisable. */
export interface TasksetState {
  /** Epoch of the next draw; equals `totalEpochs` once every epoch is drawn. */
  epoch: number;
  /** Position of the next draw within its epoch. */
  index: number;
  /** Size, selector and seed the cursor was saved with; a restore checks they still hold. */
  size: number;
  selector: Selector;
  seed: number;
}

/** The rows of a taskset, drawn in batches. */
export class Taskset {
  #epoch = 0;
  #index = 0;
  /** The draw order of epoch `#orderEpoch`. */
  #order: number[] = [];
  #orderEpoch = -1;

  private constructor(
    /** The files read, in order. */
    readonly files: readonly string[],
    /** The usable rows, in file order (frozen; shared by every draw). */
    readonly rows: readonly Readonly<Record<string, unknown>>[],
    /**
     * Where each usable row is: `file line N` (JSONL, 1-based), `file row N` (parquet) or
     * `file table T row ID` (sqlite).
     */
    readonly rowOrigins: readonly string[],
    /** Rows left out, with file, line or row, and reason. */
    readonly skippedRows: readonly ReadWarning[],
    readonly selector: Selector,
    readonly totalEpochs: number,
    readonly seed: number,
    /** The fields every task shares. */
    private readonly template: Omit<Task, "taskId" | "index" | "epoch" | "rawTask">,
  ) {}

  /**
   * Validates `config`, finds the files and reads every row; throws an InputError (bad input:
   * exit 2) when the files are missing or no row is usable.
   */
  static async open(config: TasksetConfig): Promise<Taskset> {
    const fail = (detail: string): never => {
      throw new InputError(`Cannot open taskset ${config.path}: ${detail}`);
    };
    const { selector = "sequential", totalEpochs = 1, seed = 42 } = config;
    if (!SELECTORS.includes(selector)) {
      fail(`selector is ${JSON.stringify(selector)}; expected one of ${SELECTORS.join(", ")}`);
    }
    if (!Number.isInteger(totalEpochs) || totalEpochs < 1) {
      fail(`totalEpochs is ${totalEpochs}; expected an integer >= 1`);
    }
    if (!Number.isInteger(seed)) fail(`seed is ${seed}; expected an integer`);
    const n = config.rolloutArgs?.n ?? 1;
    if (!Number.isInteger(n) || n < 1) fail(`rolloutArgs.n is ${n}; expected an integer >= 1`);
    const format: TaskFormat = {
      ...config.format,
      promptKey: config.format?.promptKey ?? "prompt",
    };
    const sqlite = isSqliteUrl(config.path);
    const files = sqlite
      ? [sqliteFile(config.path)]
      : await findSplitFiles(config.path, config.split ?? "train", config.subsetName)
        .catch((err: Error) => fail(err.message.replace(/^Cannot open dataset [^:]*: /, "")));
    const rows: Readonly<Record<string, unknown>>[] = [];
    const skippedRows: ReadWarning[] = [];
    const rowOrigins: string[] = [];
    const take = (row: unknown, path: string, at: { line: number } | { row: number }) => {
      const reason = rowProblem(row, format) ??
        config.rowCheck?.(row as Record<string, unknown>, format);
      if (reason === undefined) {
        rows.push(Object.freeze(row as Record<string, unknown>));
        rowOrigins.push(where({ path, ...at, reason: "" }));
      } else skippedRows.push({ path, ...at, reason });
    };
    if (sqlite) {
      const { table } = config;
      if (table === undefined) fail("expected the name of its table with an sqlite:/// path");
      const path = `${files[0]} table ${table}`;
      for (const entry of readSqliteRows(config.path, table!)) {
        if (entry.ok) take(entry.value, path, { row: entry.id });
        else skippedRows.push({ path, row: entry.id, reason: entry.reason });
      }
    }
    for (const path of sqlite ? [] : files) {
      if (path.endsWith(".jsonl")) {
        for (const entry of await readJsonlLines(path)) {
          if (entry.ok) take(entry.value, path, { line: entry.line });
          else skippedRows.push({ path, line: entry.line, reason: entry.reason });
        }
      } else {
        (await readParquetRows(path)).forEach((row, i) => take(jsonSafe(row), path, { row: i }));
      }
    }
    if (rows.length === 0) {
      const first = skippedRows[0];
      fail(
        `no usable rows in ${files.join(", ")}` +
          (first
            ? ` (${skippedRows.length} skipped; first: ${where(first)}: ${first.reason})`
            : ""),
      );
    }
    return new Taskset(files, rows, rowOrigins, skippedRows, selector, totalEpochs, seed, {
      workflow: config.defaultWorkflowType,
      ...(config.defaultRewardFnType === undefined ? {} : { rewardFn: config.defaultRewardFnType }),
      formatArgs: Object.freeze(format),
      rolloutArgs: Object.freeze({ ...config.rolloutArgs, n }),
      workflowArgs: Object.freeze({ ...config.workflowArgs }),
      isEval: config.isEval ?? false,
    });
  }

  /** Number of usable rows (draws per epoch). */
  get size(): number {
    return this.rows.length;
  }

  /** True once every draw of the last epoch is handed out. */
  get exhausted(): boolean {
    return this.#epoch >= this.totalEpochs;
  }

  /**
   * The next `batchSize` tasks, continuing across epochs; the last batch may be shorter. Null
   * once the taskset is exhausted: that is the end of the data.
   */
  nextBatch(batchSize: number): Task[] | null {
    if (!Number.isInteger(batchSize) || batchSize < 1) {
      throw new Error(`Cannot draw a batch of ${batchSize} tasks: expected an integer >= 1`);
    }
    if (this.exhausted) return null;
    const tasks: Task[] = [];
    while (tasks.length < batchSize && !this.exhausted) {
      const index = this.#orderOf(this.#epoch)[this.#index];
      tasks.push({
        ...this.template,
        taskId: `${this.#epoch}.${this.#index}`,
        index,
        epoch: this.#epoch,
        rawTask: this.rows[index],
      });
      if (++this.#index === this.size) [this.#epoch, this.#index] = [this.#epoch + 1, 0];
    }
    return tasks;
  }

  /** The cursor, to save with a checkpoint. */
  state(): TasksetState {
    const { size, selector, seed } = this;
    return { epoch: this.#epoch, index: this.#index, size, selector, seed };
  }

  /**
   * Moves the cursor to a saved `state`; throws an InputError if it was saved for other data or
   * settings (the taskset changed between a run and its resume).
   */
  restore(state: TasksetState): void {
    const fail = (detail: string): never => {
      throw new InputError(
        `Cannot restore the taskset cursor of ${this.files.join(", ")}: ${detail}`,
      );
    };
    for (const key of ["size", "selector", "seed"] as const) {
      if (state[key] !== this[key]) {
        fail(
          `it was saved with ${key} ${JSON.stringify(state[key])}; this taskset has ${
            JSON.stringify(this[key])
          }`,
        );
      }
    }
    const { epoch, index } = state;
    if (!Number.isInteger(epoch) || epoch < 0 || epoch > this.totalEpochs) {
      fail(`epoch is ${epoch}; expected an integer in [0, ${this.totalEpochs}]`);
    }
    const last = epoch === this.totalEpochs ? 0 : this.size - 1;
    if (!Number.isInteger(index) || index < 0 || index > last) {
      fail(`index is ${index}; expected an integer in [0, ${last}] in epoch ${epoch}`);
    }
    [this.#epoch, this.#index] = [epoch, index];
  }

  /** Row indices in draw order for `epoch`, cached for the current epoch. */
  #orderOf(epoch: number): number[] {
    if (this.#orderEpoch !== epoch) {
      this.#order = drawOrder(this.selector, this.size, this.seed, epoch);
      this.#orderEpoch = epoch;
    }
    return this.#order;
  }
}

/** The `size` row indices of `epoch` in draw order; the same for the same arguments, always. */
export function drawOrder(selector: Selector, size: number, seed: number, epoch: number): number[] {
  const order = Array.from({ length: size }, (_, i) => i);
  if (selector === "sequential") return order;
  const next = mulberry32((seed ^ Math.imul(epoch + 1, 0x9e3779b9)) >>> 0);
  if (selector === "random") return order.map(() => Math.floor(next() * size));
  for (let i = size - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

/** `value` with parquet INT64 bigints as numbers (as text when beyond 2^53), recursively. */
function jsonSafe(value: unknown): unknown {
  if (typeof value === "bigint") {
    return Number.isSafeInteger(Number(value)) ? Number(value) : String(value);
  }
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (typeof value === "object" && value !== null && value.constructor === Object) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonSafe(v)]));
  }
  return value;
}

/** `file line N` or `file row N`. */
function where(w: ReadWarning): string {
  return w.line !== undefined ? `${w.path} line ${w.line}` : `${w.path} row ${w.row}`;
}
