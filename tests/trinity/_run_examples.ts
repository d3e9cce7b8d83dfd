/**
 * Runs Trinity example configs one after another in this process, as `./rft run CONFIG --set
 * ...` runs each (the CLI's `main`), so that compiled GPU pipelines are shared between runs.
 * Reads the jobs as JSON from stdin (each: config path, working directory, environment, `--set`
 * keys); writes one JSON line per job to stdout: the exit code and what the run printed.
 * Used by `trinity_examples_test.ts` in a subprocess of its own (it changes directory and
 * environment per job).
 */

import { main } from "../../src/cli/main.ts";
import { setLineSink } from "../../src/util/status_lines.ts";

/** One run. */
export interface ExampleJob {
  config: string;
  cwd: string;
  env: Record<string, string>;
  sets: readonly string[];
}

/** What a run did. */
export interface ExampleResult {
  config: string;
  code: number;
  stderr: string;
  stdout: string;
  /** Wall-clock seconds of the run. */
  seconds: number;
}

/** Runs `job` with console output captured. */
async function runJob(job: ExampleJob): Promise<ExampleResult> {
  Deno.chdir(job.cwd);
  for (const [key, value] of Object.entries(job.env)) Deno.env.set(key, value);
  const out: string[] = [];
  const err: string[] = [];
  const [log, error] = [console.log, console.error];
  console.log = (...args: unknown[]) => out.push(args.join(" "));
  console.error = (...args: unknown[]) => err.push(args.join(" "));
  const sink = setLineSink({
    write: (text) => err.push(text.replace(/\n$/, "")),
    isTerminal: false,
    columns: () => 120,
  });
  let code: number;
  const started = performance.now();
  try {
    code = await main(["run", job.config, ...job.sets.flatMap((s) => ["--set", s])]);
  } catch (e) {
    err.push(`uncaught: ${(e as Error).stack}`);
    code = 1;
  } finally {
    [console.log, console.error] = [log, error];
    setLineSink(sink);
    for (const key of Object.keys(job.env)) Deno.env.delete(key);
  }
  const seconds = (performance.now() - started) / 1000;
  return { config: job.config, code, stderr: err.join("\n"), stdout: out.join("\n"), seconds };
}

if (import.meta.main) {
  const jobs: ExampleJob[] = JSON.parse(await new Response(Deno.stdin.readable).text());
  for (const job of jobs) {
    const result = await runJob(job);
    await Deno.stdout.write(new TextEncoder().encode(JSON.stringify(result) + "\n"));
  }
  Deno.exit(0);
}
