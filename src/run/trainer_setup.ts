/**
 * Builds a stage's TrainStep (the resolved algorithm's losses, the stage's optimizer and clip) and
 * its Trainer around it: the frozen reference model when the loss needs reference log-probs (the
 * stage's initial weights, never its resumed ones), and for algorithms with a critic (`ppo`) a
 * value model whose trunk starts from the policy's current weights (as verl initialises the
 * critic from the actor's path) with its own AdamW at `trainer.critic_lr`; a resumed stage takes
 * the critic and its optimizer state from the checkpoint it resumes.
 */

import type { StageConfig } from "../config/run_config.ts";
import type { PolicyModel } from "../model/policy.ts";
import { loadCriticCheckpoint } from "../trainer/checkpoint.ts";
import { createCritic, CriticStep } from "../trainer/critic.ts";
import { TrainStep, type TrainStepConfig } from "../trainer/train_step.ts";
import type { ResolvedAlgorithm } from "./algorithm_setup.ts";
import { loadStagePolicy } from "./policy_setup.ts";
import type { StageContext } from "./stage_context.ts";
import { Trainer } from "../trainer/trainer.ts";

/** A stage's trainer and what to free after the stage. */
export interface StageTrainer {
  trainer: Trainer;
  /** The critic, for checkpoints (algorithms with a critic). */
  critic?: CriticStep;
  /** Frees the reference model and the critic (the TrainStep is the caller's). */
  destroy(): void;
}

/**
 * The trainer of `stage` training `model` with `trainStep`; `computeAdvantages` says whether
 * it computes the algorithm's advantages itself; `resumedDir` is the checkpoint the stage
 * resumes from, if any (its critic is loaded).
 */
export async function createStageTrainer(
  stage: StageConfig,
  algorithm: ResolvedAlgorithm,
  ctx: StageContext,
  model: PolicyModel,
  trainStep: TrainStep,
  computeAdvantages: boolean,
  resumedDir?: string,
): Promise<StageTrainer> {
  const reference = trainStep.needsReference
    ? (await loadStagePolicy(stage, ctx.stageDir, ctx.gpu, {
      previousCheckpoint: ctx.previousCheckpoint,
      resume: false,
    })).model
    : undefined;
  const critic = algorithm.type.useCritic
    ? await createStageCritic(stage, model, resumedDir)
    : undefined;
  const temperature = stage.model.temperature > 0 ? stage.model.temperature : 1;
  const trainer = new Trainer({
    trainStep,
    referenceModel: reference,
    critic,
    advantageFn: computeAdvantages ? algorithm.advantageFn : undefined,
    ppoEpochs: stage.trainer.ppoEpochs,
    miniBatchSize: stage.trainer.ppoMiniBatchSize,
    temperature,
  });
  return {
    trainer,
    critic,
    destroy() {
      reference?.destroy();
      critic?.destroy();
      critic?.critic.destroy();
    },
  };
}

/**
 * The critic of a stage with its own AdamW: the one saved in `resumedDir` when it holds one,
 * else the trunk from `model`'s weights and a zero value head.
 */
async function createStageCritic(
  stage: StageConfig,
  model: PolicyModel,
  resumedDir: string | undefined,
): Promise<CriticStep> {
  const saved = resumedDir ? await loadCriticCheckpoint(resumedDir) : undefined;
  const critic = await createCritic(
    model.rawConfig,
    saved?.parameters ?? await model.readParameters(),
    { gpu: model.gpu },
  );
  const lr = stage.trainer.criticLr ?? stage.algorithm.optimizer.lr;
  const step = new CriticStep(critic, {
    optimizer: optimizerFor(stage, lr, stage.buffer.totalSteps),
    gradClip: gradClipFor(stage),
    cliprangeValue: stage.trainer.cliprangeValue,
  });
  if (saved) step.optimizer.loadState(saved.optimizerState);
  return step;
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
