/**
 * A whole run: the run directory (`<checkpoint_root_dir>/<project>/<name>/`), the resolved
 * config written into it, the monitor, and the stages in order, each starting from the previous
 * stage's final checkpoint. A stage that finished is recorded in `<stage dir>/stage_done.json`
 * and skipped when the run is started again; an unfinished one resumes from its own state. Every
 * stage is checked before any GPU work (`run_components.ts`, `run_preflight.ts`). A
 * bench stage is never recorded: it evaluates the checkpoints there each time it runs.
 * Ends with the plot and a summary.
 */

import { relative, resolve } from "node:path";
import { resolvedConfigYaml } from "../config/resolved_yaml.ts";
import type { RunConfig, StageConfig } from "../config/run_config.ts";
import type { ResolvedAlgorithm } from "../algorithm/resolve_algorithm.ts";
import { getGpu, type GpuContext } from "../gpu/device.ts";
import { Monitor } from "../monitor/monitor.ts";
import { METRICS_FILE, readMetrics } from "../monitor/metrics_log.ts";
import { writePlot } from "../monitor/plot.ts";
import { findLatestCheckpoint } from "../trainer/checkpoint.ts";
import { beginActivity } from "../util/activity.ts";
import { writeAtomic } from "../util/write_atomic.ts";
import { checkStages, checkStoredExperiences } from "./run_preflight.ts";
import { runStage } from "./run_stage.ts";
import type { StageOutcome } from "./stage_context.ts";
import { validateComponents } from "./run_components.ts";
import {
  checkLocalPair,
  EXPLORER_DIR,
  pairRole,
  PairServer,
  trainerStageDir,
  waitForTrainer,
} from "./local_pair.ts";

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
  /** The plot's file; absent when the run logged no row. */
  plot?: string;
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
  {
    using _checking = beginActivity("checking the stages' models, tasksets and datasets");
    await checkStages(config, log);
  }
  await checkLocalPair(config);
  const role = pairRole(config);
  const runDir = await chooseRunDir(first, role);
  const multi = config.stages.length > 1;
  const stageDir = (s: StageConfig) => (multi ? `${runDir}/${s.stageName}` : runDir);
  const { done, resume } = await finishedStages(config.stages, stageDir);
  await checkStoredExperiences(config, stageDir, done);
  await Deno.mkdir(runDir, { recursive: true });
  await writeAtomic(`${runDir}/config.yaml`, resolvedConfigYaml(config));
  const monitor = await Monitor.open(runDir, {
    tensorboard: first.monitor.tensorboard,
    console: first.monitor.console,
    monitors: first.monitor.monitors,
    project: first.project,
    name: first.name,
    resumeAfterStep: resume.step,
    resumeStage: multi ? resume.stage : undefined,
  });
  log(`run directory ${runDir}`);
  const gpu = await getGpu();
  await using server = role === "trainer" ? new PairServer(runDir, log) : undefined;
  const localUrl = (stage: StageConfig) =>
    server ? () => server.url() : () =>
      waitForTrainer(
        runDir,
        `${trainerStageDir(runDir, stage, multi)}/${STAGE_DONE_FILE}`,
        log,
        signal,
      );
  const run = { algorithms, done, resume, multi, stageDir, monitor, gpu, log, signal, localUrl };
  let stages: RunSummary["stages"];
  try {
    stages = await runStages(config.stages, run);
  } finally {
    await monitor.close();
  }
  // An explorer that found nothing left to do logged no row: nothing to plot.
  const { rows } = await readMetrics(`${runDir}/${METRICS_FILE}`).catch(() => ({ rows: [] }));
  const plot = rows.length ? await writePlot(runDir) : undefined;
  return { runDir, stages, seconds: (performance.now() - started) / 1000, plot };
}

/** Where a run resumes: the stage under way and its last checkpoint's step. */
interface ResumePoint {
  stage: string;
  step: number;
}

/**
 * The record of each stage that finished (up to the first that did not; a bench stage never
 * counts as finished), and where the run resumes: the first unfinished stage at its latest
 * checkpoint's step (0 without one); the rows logged after it are dropped.
 */
async function finishedStages(
  stages: readonly StageConfig[],
  stageDir: (stage: StageConfig) => string,
): Promise<{ done: (StageDone | undefined)[]; resume: ResumePoint }> {
  const done: (StageDone | undefined)[] = [];
  for (const stage of stages) {
    // A bench stage evaluates what is there each time it runs; it never counts as finished.
    const record = stage.mode === "bench" ? undefined : await readStageDone(stageDir(stage));
    done.push(record);
    if (!record) {
      const latest = await findLatestCheckpoint(stageDir(stage));
      const step = latest ? Number(/step_(\d+)$/.exec(latest)?.[1] ?? 0) : 0;
      return { done, resume: { stage: stage.stageName, step } };
    }
  }
  const last = stages[stages.length - 1];
  return { done, resume: { stage: last.stageName, step: done.at(-1)?.steps ?? 0 } };
}

/** What {@link runStages} runs the stages with. */
interface StagesRun {
  algorithms: readonly ResolvedAlgorithm[];
  done: readonly (StageDone | undefined)[];
  /** Where the run resumes. */
  resume: ResumePoint;
  /** Whether the run has several stages (the monitor then names each). */
  multi: boolean;
  stageDir: (stage: StageConfig) => string;
  monitor: Monitor;
  gpu: GpuContext;
  log: (line: string) => void;
  signal: AbortSignal;
  /** A local pair's NATS URL for `stage` (`local_pair.ts`). */
  localUrl: (stage: StageConfig) => () => Promise<string | undefined>;
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
      using _stage = beginActivity(`stage ${stage.stageName}`);
      const dir = run.stageDir(stage);
      await Deno.mkdir(dir, { recursive: true });
      await run.monitor.beginStage({
        name: run.multi ? stage.stageName : undefined,
        totalSteps: stage.buffer.totalSteps,
        startStep: run.resume.stage === stage.stageName ? run.resume.step : 0,
      });
      outcome = await runStage(stage, run.algorithms[i], {
        gpu: run.gpu,
        stageDir: dir,
        monitor: run.monitor,
        log: (line) => run.log(`[${stage.stageName}] ${line}`),
        signal: run.signal,
        previousCheckpoint,
        localUrl: run.localUrl(stage),
      });
      if (stage.mode !== "bench" && !outcome.skipped) await writeStageDone(dir, outcome);
      await run.monitor.endStage();
    }
    summary.push({ name: stage.stageName, outcome });
    previousCheckpoint = outcome.finalCheckpoint ?? previousCheckpoint;
  }
  return summary;
}

/** `<root>/<project>/<name>`, or `<root>/<project>/<group>/<name>` with a group (Trinity's). */
export function runDirectory(
  stage: Pick<StageConfig, "checkpointRootDir" | "project" | "group" | "name">,
): string {
  const group = stage.group ? `/${stage.group}` : "";
  return `${stage.checkpointRootDir}/${stage.project}${group}/${stage.name}`;
}

/**
 * The run directory of `stage` ({@link runDirectory}); when it already holds a run and
 * `continue_from_checkpoint` is false, a fresh sibling with a time suffix (nothing is deleted).
 * The trainer of a local pair always takes that directory (its explorer looks there), the
 * explorer its `explorer/` folder.
 */
async function chooseRunDir(stage: StageConfig, role?: "trainer" | "explorer"): Promise<string> {
  const dir = runDirectory(stage);
  if (role === "explorer") return `${dir}/${EXPLORER_DIR}`;
  if (stage.continueFromCheckpoint || role === "trainer") return dir;
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

/** The record `writeStageDone` left in `dir`, if any (its checkpoint path made absolute). */
async function readStageDone(dir: string): Promise<StageDone | undefined> {
  try {
    const record: StageDone = JSON.parse(await Deno.readTextFile(`${dir}/${STAGE_DONE_FILE}`));
    const checkpoint = record.final_checkpoint;
    return { ...record, final_checkpoint: checkpoint && resolve(dir, checkpoint) };
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw new Error(`Cannot read ${dir}/${STAGE_DONE_FILE}: ${(err as Error).message}`);
  }
}

/** Records in `dir` that its stage finished with `outcome`. */
async function writeStageDone(dir: string, outcome: StageOutcome): Promise<void> {
  const record: StageDone = {
    steps: outcome.steps,
    // Relative to the stage's directory: a run directory moved elsewhere still finds it.
    final_checkpoint: outcome.finalCheckpoint && relative(dir, outcome.finalCheckpoint),
    last_eval: outcome.lastEval,
  };
  await writeAtomic(`${dir}/${STAGE_DONE_FILE}`, JSON.stringify(record, null, 2) + "\n");
}
