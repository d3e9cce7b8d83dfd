/**
 * The progress output of a long command, on stderr: ordinary lines, and one updating line on a
 * terminal (a step's progress, a heartbeat) that is redrawn in place and stays below the ordinary
 * lines; when stderr is not a terminal the updating line is an ordinary line, so a log file reads
 * one line per update. When it last wrote is kept in {@link STATUS_BOARD}, shared memory a
 * heartbeat on another thread reads (it can speak while this thread is busy) and marks when it
 * left an updating line of its own, which the next write here clears first.
 */

const encoder = new TextEncoder();

/** Where lines go and whether that is a terminal (tests swap it). */
export interface LineSink {
  write(text: string): void;
  isTerminal: boolean;
  /** Columns of the terminal (the updating line is cut to fit). */
  columns(): number;
}

/** stderr as a {@link LineSink}. */
export const STDERR_SINK: LineSink = {
  write: (text) => {
    const bytes = encoder.encode(text);
    for (let done = 0; done < bytes.length;) done += Deno.stderr.writeSync(bytes.subarray(done));
  },
  isTerminal: Deno.stderr.isTerminal(),
  columns: () => {
    try {
      return Deno.consoleSize().columns;
    } catch {
      return 120;
    }
  },
};

let sink: LineSink = STDERR_SINK;
let updating: string | undefined; // the updating line shown now (terminal only)

/**
 * Shared memory: float64 0 is the last write's time (`Date.now()` ms), int32 2 is 1 while
 * another thread's updating line is on the terminal.
 */
export const STATUS_BOARD: SharedArrayBuffer = new SharedArrayBuffer(16);
const lastWrite = new Float64Array(STATUS_BOARD, 0, 1);
const foreignLine = new Int32Array(STATUS_BOARD, 8, 1);
lastWrite[0] = Date.now();

/** Writes `text` after clearing another thread's updating line, and stamps the time. */
function write(text: string): void {
  const cleared = Atomics.exchange(foreignLine, 0, 0) === 1 && updating === undefined;
  sink.write(cleared ? `\r\x1b[K${text}` : text);
  lastWrite[0] = Date.now();
}

/** Replaces the sink (tests); returns the previous one. */
export function setLineSink(next: LineSink): LineSink {
  const previous = sink;
  sink = next;
  updating = undefined;
  return previous;
}

/** Prints `text` as an ordinary line (above the updating line on a terminal). */
export function printLine(text: string): void {
  if (!sink.isTerminal || updating === undefined) {
    write(`${text}\n`);
    return;
  }
  write(`\r\x1b[K${text}\n${fit(updating)}`);
}

/**
 * Shows `text` as the updating line: redrawn in place on a terminal, an ordinary line otherwise.
 */
export function printUpdatingLine(text: string): void {
  if (!sink.isTerminal) {
    write(`${text}\n`);
    return;
  }
  updating = text;
  write(`\r\x1b[K${fit(text)}`);
}

/** Ends the updating line (it stays on screen as it is); later lines start below it. */
export function endUpdatingLine(): void {
  if (sink.isTerminal && updating !== undefined) write("\n");
  updating = undefined;
}

/** Seconds since anything was printed (by this thread, or a heartbeat), read from `board`. */
export function quietSeconds(board: SharedArrayBuffer = STATUS_BOARD, now = Date.now()): number {
  return (now - new Float64Array(board, 0, 1)[0]) / 1000;
}

/**
 * Records on `board` that another thread printed now, and with `updatingLine` that its line is
 * an updating one the next write must clear.
 */
export function noteForeignWrite(board: SharedArrayBuffer, updatingLine: boolean): void {
  new Float64Array(board, 0, 1)[0] = Date.now();
  if (updatingLine) Atomics.store(new Int32Array(board, 8, 1), 0, 1);
}

function fit(text: string): string {
  const columns = Math.max(20, sink.columns() - 1);
  return text.length > columns ? `${text.slice(0, columns - 1)}…` : text;
}
