/**
 * The progress output of a long command, on stderr: ordinary lines, and one updating line on a
 * terminal (a step's progress, a heartbeat) that is redrawn in place and stays below the ordinary
 * lines; when stderr is not a terminal the updating line is an ordinary line, so a log file reads
 * one line per update. Remembers when it last wrote, so a heartbeat can tell a quiet stretch.
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
let lastWrite = performance.now();

/** Replaces the sink (tests); returns the previous one. */
export function setLineSink(next: LineSink): LineSink {
  const previous = sink;
  sink = next;
  updating = undefined;
  return previous;
}

/** Prints `text` as an ordinary line (above the updating line on a terminal). */
export function printLine(text: string): void {
  lastWrite = performance.now();
  if (!sink.isTerminal || updating === undefined) {
    sink.write(`${text}\n`);
    return;
  }
  sink.write(`\r\x1b[K${text}\n${fit(updating)}`);
}

/**
 * Shows `text` as the updating line: redrawn in place on a terminal, an ordinary line otherwise.
 */
export function printUpdatingLine(text: string): void {
  lastWrite = performance.now();
  if (!sink.isTerminal) {
    sink.write(`${text}\n`);
    return;
  }
  updating = text;
  sink.write(`\r\x1b[K${fit(text)}`);
}

/** Ends the updating line (it stays on screen as it is); later lines start below it. */
export function endUpdatingLine(): void {
  if (sink.isTerminal && updating !== undefined) sink.write("\n");
  updating = undefined;
}

/** Seconds since anything was printed through this module. */
export function quietSeconds(now = performance.now()): number {
  return (now - lastWrite) / 1000;
}

/** Counts output printed elsewhere (console.log of a command) as a write. */
export function noteOutput(): void {
  lastWrite = performance.now();
}

function fit(text: string): string {
  const columns = Math.max(20, sink.columns() - 1);
  return text.length > columns ? `${text.slice(0, columns - 1)}…` : text;
}
