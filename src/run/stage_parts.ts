/**
 * The pieces every stage mode assembles: what a stage runs with (context and outcome), tasksets
 * from config sections, the rollout model, the train step with the resolved algorithm, eval
 * scheduling, and checkpoints that carry the buffer's consumption record.
 */

import { BUFFER_STATE_FILE } from "../buffer/experience_buffer.ts";
import { promptEncodingProblem } from "../buffer/task.ts";
import { Taskset, type TasksetConfig } from "../buffer/taskset.ts";
import type { StageConfig, TasksetSection } from "../config/run_config.ts";
import type { GpuContext } from "../gpu/device.ts";
import type { PolicyModel } from "../model/policy.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import type { Monitor } from "../monitor/monitor.ts";
import { saveCheckpoint } from "../trainer/checkpoint.ts";
import type { CriticStep } from "../trainer/critic.ts";
import { TrainStep, type TrainStepConfig } from "../trainer/train_step.ts";
import { writeAtomic } from "../util/write_atomic.ts";
import { PolicyRolloutModel } from "../workflow/policy_rollout_model.ts";
import type { ResolvedAlgorithm } from "./algorithm_setup.ts";
import type { EvalTaskset } from "./explorer.ts";

/** What a stage runs with. */
export interface StageContext {
  gpu: GpuContext;
  /** The stage's directory (checkpoints, experiences, cursor files). */
  stageDir: string;
  /** Global step of this stage's step 0 (the steps of the stages before it). */
  stepOffset: number;
  monitor: Monitor;
  /** Prints one line of progress or warning. */
  log: (line: string) => void;
  signal: AbortSignal;
  /** The previous stage's final checkpoint: this stage's initial weights. */
  previousCheckpoint?: string;
}

/** What a finished stage leaves. */
export interface StageOutcome {
  /** Steps this stage ran in total (resumed ones included). */
  steps: number;
  /** Its last checkpoint (the next stage starts from it); absent when nothing was trained. */
  finalCheckpoint?: string;
  /** The last evaluation's metrics. */
  lastEval: Record<string, number>;
}

/**
 * A `TasksetConfig` for `section` of `stage`; with `tokenizer`, a row whose prompt it cannot
 * encode is skipped at load (listed by its file line).
 */
export function tasksetConfig(
  stage: StageConfig,
  section: TasksetSection,
  repeatTimes: number,
  isEval: boolean,
  tokenizer?: Tokenizer,
): TasksetConfig {
  const input = stage.buffer.explorerInput;
  const { n, ...sampling } = section.rolloutArgs;
  const rolloutArgs = Object.fromEntries(
    Object.entries(sampling).filter(([, v]) => v !== undefined),
  );
  return {
    path: section.path,
    split: section.split,
    subsetName: section.subsetName,
    format: section.format,
    selector: section.selector,
    totalEpochs: isEval ? 1 : stage.buffer.totalEpochs,
    seed: section.seed,
    defaultWorkflowType: section.defaultWorkflowType ?? input.defaultWorkflowType,
    defaultRewardFnType: section.defaultRewardFnType ?? input.defaultRewardFnType,
    rolloutArgs: { ...rolloutArgs, n: n ?? (isEval ? 1 : repeatTimes) },
    workflowArgs: section.workflowArgs,
    isEval,
    ...(tokenizer === undefined ? {} : {
      rowCheck: (row, formatArgs) => promptEncodingProblem({ rawTask: row, formatArgs }, tokenizer),
    }),
  };
}

/** The eval tasksets of `stage`, opened; skipped rows are logged. */
export async function openEvalTasksets(
  stage: StageConfig,
  log: (line: string) => void,
  tokenizer?: Tokenizer,
): Promise<EvalTaskset[]> {
  return await Promise.all(stage.buffer.explorerInput.evalTasksets.map(async (section) => {
    const taskset = await Taskset.open(tasksetConfig(stage, section, 1, true, tokenizer));
    logSkipped(taskset, log);
    return { name: section.name, taskset, rewardFnArgs: section.rewardFnArgs };
  }));
}

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

/** The rollout model of `model` with the stage's limits and sampling defaults. */
export function rolloutModel(
  stage: StageConfig,
  model: PolicyModel,
  seed: number,
): PolicyRolloutModel {
  const { maxPromptTokens, maxResponseTokens, temperature, topP, topK } = stage.model;
  return new PolicyRolloutModel(model, {
    maxPromptTokens,
    maxResponseTokens,
    defaults: { temperature, topP, topK },
    seed,
  });
}

/** AdamW and schedule settings of the stage's `algorithm.optimizer`, at peak rate `lr`. */
export function optimizerFor(
  stage: StageConfig,
  lr: number,
  totalSteps?: number,
): TrainStepConfig["optimizer"] {
  const o = stage.algorithm.optimizer;
  return {
    lr,
    betas: o.betas,
    eps: o.eps,
    weightDecay: o.weightDecay,
    lr_warmup_steps: o.lrWarmupSteps,
    warmup_style: o.warmupStyle,
    min_lr_ratio: o.minLrRatio,
    total_training_steps: totalSteps,
  };
}

/** The stage's gradient-norm clip (`algorithm.optimizer.grad_clip`; 0 = none). */
export function gradClipFor(stage: StageConfig): number | undefined {
  const clip = stage.algorithm.optimizer.gradClip;
  return clip > 0 ? clip : undefined;
}

/** The train step of `model` for the resolved algorithm and the stage's optimizer. */
export function trainStepFor(
  stage: StageConfig,
  algorithm: ResolvedAlgorithm,
  model: PolicyModel,
  totalSteps?: number,
): TrainStep {
  return new TrainStep(model, {
    policyLossFn: algorithm.policyLossFn,
    policyLossArgs: algorithm.policyLossFnArgs,
    optimizer: optimizerFor(stage, stage.algorithm.optimizer.lr, totalSteps),
    gradClip: gradClipFor(stage),
    temperature: stage.model.temperature > 0 ? stage.model.temperature : 1,
    klLossFn: algorithm.klLossFn,
    klLossArgs: algorithm.klLossFnArgs,
    entropyLossFn: algorithm.entropyLossFn,
    entropyLossArgs: algorithm.entropyLossFnArgs,
    maxTokensPerMicroBatch: stage.trainer.maxTokensPerMicroBatch,
    packSequences: stage.trainer.packSequences,
  });
}

/** Whether to evaluate before training step `step` + 1 (weights of version `step`). */
export function evalDue(stage: StageConfig, step: number, startStep: number): boolean {
  const { evalInterval, evalOnStartup } = stage.explorer;
  if (stage.buffer.explorerInput.evalTasksets.length === 0) return false;
  if (step === startStep && step === 0) return evalOnStartup;
  return evalInterval > 0 && step % evalInterval === 0 && step !== startStep;
}

/** What a stage checkpoint holds beside the policy and its optimizer. */
export interface StageCheckpointParts {
  /** JSON fields for the trainer state (e.g. a data cursor). */
  extra?: Record<string, unknown>;
  /** The experience buffer whose handed-out experiences the checkpoint records. */
  bufferDir?: string;
  /** The PPO critic, saved under `critic/`. */
  critic?: CriticStep;
}

/**
 * Saves a checkpoint of `trainStep` at stage step `step`, recording in its trainer state the
 * experiences the buffer in `bufferDir` has handed out (so a resume from it hands out again
 * exactly those taken after it), `extra` and the critic.
 */
export async function saveStageCheckpoint(
  stage: StageConfig,
  stageDir: string,
  step: number,
  trainStep: TrainStep,
  { extra = {}, bufferDir, critic }: StageCheckpointParts = {},
): Promise<string> {
  let retired: string[] = [];
  if (bufferDir) {
    try {
      retired = JSON.parse(await Deno.readTextFile(`${bufferDir}/${BUFFER_STATE_FILE}`)).retired;
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
  return await saveCheckpoint(
    stageDir,
    step,
    trainStep,
    { ...extra, stage: stage.stageName, buffer_retired: retired },
    { maxToKeep: stage.trainer.maxCheckpointsToKeep, critic },
  );
}

/**
 * Before a resumed stage opens its buffer: makes the buffer's consumption record that of the
 * checkpoint resumed from (none: nothing consumed), so experiences whose training was lost with
 * the killed process are handed out again.
 */
export async function rewindBuffer(bufferDir: string, retired: readonly string[]): Promise<void> {
  await Deno.mkdir(bufferDir, { recursive: true });
  await writeAtomic(
    `${bufferDir}/${BUFFER_STATE_FILE}`,
    JSON.stringify({ version: 1, retired, useCounts: {} }) + "\n",
  );
}
