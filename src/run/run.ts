/**
 * A whole run: the run directory (`<checkpoint_root_dir>/<project>/<name>/`), the resolved
 * config written into it, the monitor, and the stages in order, each starting from the previous
 * stage's final checkpoint. A stage that finished is recorded in `<stage dir>/stage_done.json`
 * and skipped when the run is started again; an unfinished one resumes from its own state. Every
 * stage is checked before any GPU work (`run_components.ts`, `run_preflight.ts`). A
 * bench stage is never recorded: it evaluates the checkpoints there each time it runs.
 * Ends with the plot and a summary.
 */

import { resolvedConfigYaml } from "../config/resolved_yaml.ts";
import type { RunConfig, StageConfig } from "../config/run_config.ts";
import type { ResolvedAlgorithm } from "../algorithm/resolve_algorithm.ts";
import { getGpu, type GpuContext } from "../gpu/device.ts";
import { Monitor } from "../monitor/monitor.ts";
import { writePlot } from "../monitor/plot.ts";
import { findLatestCheckpoint } from "../trainer/checkpoint.ts";
import { writeAtomic } from "../util/write_atomic.ts";
import { checkStages } from "./run_preflight.ts";
import { runStage } from "./run_stage.ts";
import type { StageOutcome } from "./stage_context.ts";
import { validateComponents } from "./run_components.ts";

/** Name of the file marking a finished stage. */
export const STAGE_DONE_FILE = "stage_done.json";

/** Options of {@link runConfig}. */
export interface RunOptions {
  /** Prints progress lines (default: stderr). */
  log?: (line: string) => void;
  /** Stops the run; what was written stays. */
  signal?: AbortSignal;
}

/** What a run did. */
export interface RunSummary {
  runDir: string;
  stages: { name: string; outcome: StageOutcome }[];
  seconds: number;
  plot: string;
}

/** The `stage_done.json` contents. */
interface StageDone {
  steps: number;
  final_checkpoint?: string;
  last_eval: Record<string, number>;
}

/** Runs every stage of `config` (see the file comment). */
export async function runConfig(config: RunConfig, options: RunOptions = {}): Promise<RunSummary> {
  const started = performance.now();
  const log = options.log ?? ((line: string) => console.error(line));
  const signal = options.signal ?? new AbortController().signal;
  const first = config.stages[0];
  const algorithms = validateComponents(config);
  await checkStages(config, log);
  const runDir = await chooseRunDir(first);
  await Deno.mkdir(runDir, { recursive: true });
  await writeAtomic(`${runDir}/config.yaml`, resolvedConfigYaml(config));
  const multi = config.stages.length > 1;
  const stageDir = (s: StageConfig) => (multi ? `${runDir}/${s.stageName}` : runDir);
  const { done, resumeAfter } = await finishedStages(config.stages, stageDir);
  const monitor = await Monitor.open(runDir, {
    tensorboard: first.monitor.tensorboard,
    console: first.monitor.console,
    resumeAfterStep: resumeAfter > 0 ? resumeAfter : undefined,
  });
  log(`run directory ${runDir}`);
  const gpu = await getGpu();
  const run = { algorithms, done, resumeAfter, multi, stageDir, monitor, gpu, log, signal };
  let stages: RunSummary["stages"];
  try {
    stages = await runStages(config.stages, run);
  } finally {
    await monitor.close();
  }
  const plot = await writePlot(runDir);
  return { runDir, stages, seconds: (performance.now() - started) / 1000, plot };
}

/**
 * The record of each stage that finished (up to the first that did not; a bench stage never
 * counts as finished), and the global step the run resumes after.
 */
async function finishedStages(
  stages: readonly StageConfig[],
  stageDir: (stage: StageConfig) => string,
): Promise<{ done: (StageDone | undefined)[]; resumeAfter: number }> {
  let offset = 0;
  const done: (StageDone | undefined)[] = [];
  for (const stage of stages) {
    // A bench stage evaluates what is there each time it runs; it never counts as finished.
    const record = stage.mode === "bench" ? undefined : await readStageDone(stageDir(stage));
    done.push(record);
    if (!record) {
      const latest = await findLatestCheckpoint(stageDir(stage));
      const step = latest ? Number(/step_(\d+)$/.exec(latest)?.[1] ?? 0) : 0;
      return { done, resumeAfter: offset + step };
    }
    offset += record.steps;
  }
  return { done, resumeAfter: offset };
}

/** What {@link runStages} runs the stages with. */
interface StagesRun {
  algorithms: readonly ResolvedAlgorithm[];
  done: readonly (StageDone | undefined)[];
  /** The global step the run resumes after. */
  resumeAfter: number;
  /** Whether the run has several stages (the monitor then names each). */
  multi: boolean;
  stageDir: (stage: StageConfig) => string;
  monitor: Monitor;
  gpu: GpuContext;
  log: (line: string) => void;
  signal: AbortSignal;
}

/**
 * Runs the stages in order, each from the previous one's final checkpoint, skipping those that
 * finished; records each that finishes (bench stages excepted).
 */
async function runStages(
  stages: readonly StageConfig[],
  run: StagesRun,
): Promise<RunSummary["stages"]> {
  const summary: RunSummary["stages"] = [];
  let previousCheckpoint: string | undefined;
  let stepOffset = 0;
  for (const [i, stage] of stages.entries()) {
    const record = run.done[i];
    let outcome: StageOutcome;
    if (record) {
      run.log(`stage ${stage.stageName}: already finished (${record.steps} steps), skipped`);
      const { steps, final_checkpoint: finalCheckpoint, last_eval: lastEval } = record;
      outcome = { steps, finalCheckpoint, lastEval };
    } else {
      const mode = `mode ${stage.mode}, algorithm ${stage.algorithm.algorithmType}`;
      run.log(`stage ${stage.stageName}: ${mode}`);
      const dir = run.stageDir(stage);
      await Deno.mkdir(dir, { recursive: true });
      const total = stage.buffer.totalSteps;
      await run.monitor.beginStage({
        name: run.multi ? stage.stageName : undefined,
        totalSteps: total === undefined ? undefined : stepOffset + total,
        startStep: Math.max(stepOffset, run.resumeAfter),
      });
      outcome = await runStage(stage, run.algorithms[i], {
        gpu: run.gpu,
        stageDir: dir,
        stepOffset,
        monitor: run.monitor,
        log: (line) => run.log(`[${stage.stageName}] ${line}`),
        signal: run.signal,
        previousCheckpoint,
      });
      if (stage.mode !== "bench") await writeStageDone(dir, outcome);
      await run.monitor.endStage();
    }
    summary.push({ name: stage.stageName, outcome });
    previousCheckpoint = outcome.finalCheckpoint ?? previousCheckpoint;
    stepOffset += outcome.steps;
  }
  return summary;
}

/** The summary lines printed at the end of a run. */
export function formatSummary(summary: RunSummary): string[] {
  const lines = [`run finished in ${formatSeconds(summary.seconds)}: ${summary.runDir}`];
  for (const { name, outcome } of summary.stages) {
    const evals = Object.entries(outcome.lastEval)
      .filter(([key]) => /^eval\/[^/]+\/(accuracy|reward_mean)$/.test(key))
      .map(([key, value]) => `${key} ${value.toFixed(3)}`);
    lines.push(
      `  stage ${name}: ${outcome.steps} steps${evals.length ? `; ${evals.join(", ")}` : ""}`,
    );
  }
  lines.push(`  plot: ${summary.plot}`);
  return lines;
}

function formatSeconds(s: number): string {
  return s < 60 ? `${s.toFixed(1)} s` : `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

/**
 * The run directory of `stage`: `<root>/<project>/<name>`; when it already holds a run and
 * `continue_from_checkpoint` is false, a fresh sibling with a time suffix (nothing is deleted).
 */
async function chooseRunDir(stage: StageConfig): Promise<string> {
  const dir = `${stage.checkpointRootDir}/${stage.project}/${stage.name}`;
  if (stage.continueFromCheckpoint) return dir;
  try {
    const entries = await Array.fromAsync(Deno.readDir(dir));
    if (entries.length === 0) return dir;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return dir;
    throw err;
  }
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\..*/, "").replace("T", "-");
  return `${dir}_${stamp}`;
}

/** The record `writeStageDone` left in `dir`, if any. */
async function readStageDone(dir: string): Promise<StageDone | undefined> {
  try {
    return JSON.parse(await Deno.readTextFile(`${dir}/${STAGE_DONE_FILE}`));
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw new Error(`Cannot read ${dir}/${STAGE_DONE_FILE}: ${(err as Error).message}`);
  }
}

/** Records in `dir` that its stage finished with `outcome`. */
async function writeStageDone(dir: string, outcome: StageOutcome): Promise<void> {
  const record: StageDone = {
    steps: outcome.steps,
    final_checkpoint: outcome.finalCheckpoint,
    last_eval: outcome.lastEval,
  };
  await writeAtomic(`${dir}/${STAGE_DONE_FILE}`, JSON.stringify(record, null, 2) + "\n");
}
