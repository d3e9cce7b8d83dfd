/**
 * Builds a stage's Trainer around its TrainStep: the frozen reference model when the loss needs
 * reference log-probs (the stage's initial weights, never its resumed ones), and for algorithms
 * with a critic (`ppo`) a value model whose trunk starts from the policy's current weights (as
 * verl initialises the critic from the actor's path) with its own AdamW at `trainer.critic_lr`.
 * The critic is not checkpointed: after a resume it starts again from the resumed policy.
 */

import type { StageConfig } from "../config/run_config.ts";
import type { PolicyModel } from "../model/policy.ts";
import { createCritic, CriticStep } from "../trainer/critic.ts";
import type { TrainStep } from "../trainer/train_step.ts";
import type { ResolvedAlgorithm } from "./algorithm_setup.ts";
import { loadStagePolicy } from "./policy_setup.ts";
import { gradClipFor, optimizerFor, type StageContext } from "./stage_parts.ts";
import { Trainer } from "./trainer.ts";

/** A stage's trainer and what to free after the stage. */
export interface StageTrainer {
  trainer: Trainer;
  /** Frees the reference model and the critic (the TrainStep is the caller's). */
  destroy(): void;
}

/**
 * The trainer of `stage` training `model` with `trainStep`; `computeAdvantages` says whether
 * it computes the algorithm's advantages itself.
 */
export async function createStageTrainer(
  stage: StageConfig,
  algorithm: ResolvedAlgorithm,
  ctx: StageContext,
  model: PolicyModel,
  trainStep: TrainStep,
  computeAdvantages: boolean,
): Promise<StageTrainer> {
  const reference = trainStep.needsReference
    ? (await loadStagePolicy(stage, ctx.stageDir, ctx.gpu, {
      previousCheckpoint: ctx.previousCheckpoint,
      resume: false,
    })).model
    : undefined;
  const critic = algorithm.type.useCritic ? await createStageCritic(stage, model) : undefined;
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
    destroy() {
      reference?.destroy();
      critic?.destroy();
      critic?.critic.destroy();
    },
  };
}

/** The critic of a stage: trunk from `model`'s weights, zero value head, its own AdamW. */
async function createStageCritic(stage: StageConfig, model: PolicyModel): Promise<CriticStep> {
  const critic = await createCritic(model.rawConfig, await model.readParameters(), {
    gpu: model.gpu,
  });
  const lr = stage.trainer.criticLr ?? stage.algorithm.optimizer.lr;
  return new CriticStep(critic, {
    optimizer: optimizerFor(stage, lr, stage.buffer.totalSteps),
    gradClip: gradClipFor(stage),
    cliprangeValue: stage.trainer.cliprangeValue,
  });
}
