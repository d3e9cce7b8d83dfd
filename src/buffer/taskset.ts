/**
 * The Taskset: the rows of a JSONL, JSON (array or lines) or parquet file, a HF-style dataset
 * directory or an
 * SQLite table (Trinity's `storage_type: sql`, an `sqlite:///` path), handed
 * out as Tasks in batches by a task selector (`selectors/`: sequential, shuffle, random,
 * offline_easy2hard, difficulty_based, or a plugin's) over `totalEpochs` (`size` draws each), with
 * a cursor (and the selector's state) that can be saved and restored so a resumed run draws
 * exactly what it would have. Bad
 * rows are skipped and listed. Loads the whole split into memory; does not parse YAML (the
 * config layer maps Trinity's snake_case keys onto {@link TasksetConfig}).
 */

import { InputError } from "../util/input_error.ts";
import { findSplitFiles } from "./dataset_files.ts";
import { readJsonRows } from "./json_rows.ts";
import { readJsonlLines, readParquetRows, type ReadWarning } from "./experience_io.ts";
import { isSqliteUrl, readSqliteRows, sqliteFile } from "./sqlite_rows.ts";
import { configure } from "../util/registry.ts";
import { createSelector, TASK_SELECTORS, type TaskSelector } from "./selectors/mod.ts";
import { type RolloutArgs, rowProblem, type Task, type TaskFormat } from "./task.ts";

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
  /** A name in `TASK_SELECTORS` (`data_selector.selector_type`); default "sequential". */
  selector?: string;
  /** Numeric row keys the selector reads (`data_selector.feature_keys`). */
  featureKeys?: readonly string[];
  /** The selector's arguments over its defaults (`data_selector.kwargs`). */
  selectorArgs?: Readonly<Record<string, unknown>>;
  /** Passes over the data (`total_epochs`; default 1). */
  totalEpochs?: number;
  /** Seed of the selector (default 42). */
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
  /**
   * Check each row's prompt, messages and answer as `format` says (default true); false when
   * the workflow reads rows of its own layout (its `rowCheck` checks them).
   */
  formatCheck?: boolean;
}

/** The cursor of a taskset, as saved with a run; JSON-serialisable. */
export interface TasksetState {
  /** Epoch of the next draw; equals `totalEpochs` once every epoch is drawn. */
  epoch: number;
  /** Position of the next draw within its epoch. */
  index: number;
  /** Size, selector and seed the cursor was saved with; a restore checks they still hold. */
  size: number;
  selector: string;
  seed: number;
  /** What the selector learned (absent when it keeps nothing). */
  selectorState?: unknown;
}

/** The rows of a taskset, drawn in batches. */
export class Taskset {
  /** Draws handed out since the start of the run, across epochs. */
  #draws = 0;

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
    /** The selector's registered name. */
    readonly selector: string,
    readonly totalEpochs: number,
    readonly seed: number,
    /** Which rows the draws take, and what feedback does to it. */
    readonly taskSelector: TaskSelector,
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
    try {
      configure(TASK_SELECTORS, selector, config.selectorArgs);
    } catch (err) {
      fail((err as Error).message);
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
      const reason = (config.formatCheck === false ? undefined : rowProblem(row, format)) ??
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
      if (/\.jsonl?$/.test(path)) {
        const entries = path.endsWith(".jsonl")
          ? await readJsonlLines(path)
          : await readJsonRows(path);
        for (const entry of entries) {
          const at = "line" in entry ? { line: entry.line } : { row: entry.row };
          if (entry.ok) take(entry.value, path, at);
          else skippedRows.push({ path, ...at, reason: entry.reason });
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
    let taskSelector: TaskSelector;
    try {
      taskSelector = createSelector(selector, {
        size: rows.length,
        seed,
        featureKeys: config.featureKeys ?? [],
        feature: (key) => featureColumn(rows, rowOrigins, key),
      }, config.selectorArgs);
    } catch (err) {
      fail((err as Error).message);
    }
    return new Taskset(
      files,
      rows,
      rowOrigins,
      skippedRows,
      selector,
      totalEpochs,
      seed,
      taskSelector!,
      {
        workflow: config.defaultWorkflowType,
        ...(config.defaultRewardFnType === undefined
          ? {}
          : { rewardFn: config.defaultRewardFnType }),
        formatArgs: Object.freeze(format),
        rolloutArgs: Object.freeze({ ...config.rolloutArgs, n }),
        workflowArgs: Object.freeze({ ...config.workflowArgs }),
        isEval: config.isEval ?? false,
      },
    );
  }

  /** Number of usable rows (draws per epoch). */
  get size(): number {
    return this.rows.length;
  }

  /** True once every draw of the last epoch is handed out. */
  get exhausted(): boolean {
    return this.#draws >= this.totalEpochs * this.size;
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
    const first = this.#draws;
    const count = Math.min(batchSize, this.totalEpochs * this.size - first);
    const indices = this.taskSelector.select(first, count);
    this.#draws += count;
    return indices.map((index, i) => {
      const [epoch, position] = [Math.floor((first + i) / this.size), (first + i) % this.size];
      return {
        ...this.template,
        taskId: `${epoch}.${position}`,
        index,
        epoch,
        rawTask: this.rows[index],
      };
    });
  }

  /** The cursor and the selector's state, to save with a checkpoint. */
  state(): TasksetState {
    const { size, selector, seed } = this;
    const selectorState = this.taskSelector.state();
    return {
      epoch: Math.floor(this.#draws / size),
      index: this.#draws % size,
      size,
      selector,
      seed,
      ...(selectorState === undefined ? {} : { selectorState }),
    };
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
    if (state.selectorState !== undefined) {
      try {
        this.taskSelector.restore(state.selectorState);
      } catch (err) {
        fail(`the ${this.selector} selector's state does not fit: ${(err as Error).message}`);
      }
    }
    this.#draws = epoch * this.size + index;
  }
}

/**
 * The numeric column `key` of `rows` (a feature of `data_selector.feature_keys`); throws naming
 * the first row where it is missing or not a finite number.
 */
function featureColumn(
  rows: readonly Readonly<Record<string, unknown>>[],
  origins: readonly string[],
  key: string,
): number[] {
  return rows.map((row, i) => {
    const value = row[key];
    if (typeof value !== "number" || !Number.isFinite(value)) {
      throw new Error(
        `feature key "${key}" of ${origins[i]} is ${
          JSON.stringify(value) ?? "missing"
        }; expected a number`,
      );
    }
    return value;
  });
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
