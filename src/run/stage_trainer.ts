/**
 * Builds a stage's TrainStep (the resolved algorithm's losses, the stage's optimizer and clip) and
 * its Trainer around it: the frozen reference model when the loss needs reference log-probs (the
 * stage's initial weights, never its resumed ones; with a LoRA adapter, the policy's own frozen
 * base weights, shared), and for algorithms with a critic (`ppo`) a
 * value model whose trunk starts from the policy's current weights (as verl initialises the
 * critic from the actor's path) with its own AdamW at `trainer.critic_lr`; a resumed stage takes
 * the critic and its optimizer state from the checkpoint it resumes. The Trainer applies the
 * algorithm's advantages when `advantageFnFor` gives them to the trainer. Logs the memory report
 * (`memory_report.ts`) of the policy it trains.
 */

import type { StageConfig } from "../config/run_config.ts";
import type { PolicyModel } from "../model/policy.ts";
import { loadCriticCheckpoint } from "../trainer/checkpoint.ts";
import { createCritic, CriticStep } from "../trainer/critic.ts";
import { TrainStep, type TrainStepConfig } from "../trainer/train_step.ts";
import { advantageFnFor, type ResolvedAlgorithm } from "../algorithm/resolve_algorithm.ts";
import { loadStagePolicy, rolloutDtype, type StagePolicy } from "./stage_policy.ts";
import { matricesDtype } from "../model/weight_transfer.ts";
import { StageCheckpoints, type StageCheckpointSources } from "./stage_checkpoint.ts";
import type { StageContext } from "./stage_context.ts";
import { Trainer } from "../trainer/trainer.ts";
import { formatMemoryReport, memoryReport } from "../trainer/memory_report.ts";

/** A stage's trainer with its train step, critic and checkpoints; disposing frees them all. */
export interface StageTrainer extends Disposable {
  trainer: Trainer;
  trainStep: TrainStep;
  /** The critic (algorithms with a critic). */
  critic?: CriticStep;
  checkpoints: StageCheckpoints;
}

/** Options of {@link openStageTrainer}. */
export interface StageTrainerOptions {
  /** The checkpoint the stage resumes from (optimizer state, critic). */
  resumed?: StagePolicy["resumed"];
  /** What each checkpoint records beside the weights (buffer, data cursor). */
  checkpointSources?: StageCheckpointSources;
  /** More models the memory report names (the explorer's). */
  memoryModels?: Readonly<Record<string, PolicyModel>>;
}

/** The trainer of `stage` training `model` (see the file comment). */
export async function openStageTrainer(
  stage: StageConfig,
  algorithm: ResolvedAlgorithm,
  ctx: StageContext,
  model: PolicyModel,
  { resumed, checkpointSources = {}, memoryModels }: StageTrainerOptions = {},
): Promise<StageTrainer> {
  using owned = new DisposableStack();
  const trainStep = owned.use(trainStepFor(stage, algorithm, model, stage.buffer.totalSteps));
  if (resumed) trainStep.optimizer.loadState(resumed.optimizerState);
  // With a LoRA adapter the frozen base is the stage's initial weights: the reference shares it.
  const reference = trainStep.needsReference
    ? owned.use(
      model.lora ? model.baseModel() : (await loadStagePolicy(stage, ctx.stageDir, ctx.gpu, {
        previousCheckpoint: ctx.previousCheckpoint,
        resume: false,
        frozen: true,
      })).model,
    )
    : undefined;
  const report = memoryReport(model.config, {
    lora: model.lora?.settings,
    frozenDtype: matricesDtype(reference ?? model),
    explorer: stage.mode === "both" ? rolloutDtype(stage, model) : undefined,
    reference: reference !== undefined,
    momentsDtype: trainStep.optimizer.options.momentsDtype,
  });
  ctx.log(formatMemoryReport(report));
  const critic = algorithm.type.useCritic
    ? owned.use(await createStageCritic(stage, model, resumed?.dir))
    : undefined;
  if (critic) owned.use(critic.critic);
  const temperature = stage.model.temperature > 0 ? stage.model.temperature : 1;
  const trainer = new Trainer({
    trainStep,
    referenceModel: reference,
    critic,
    advantageFn: advantageFnFor(algorithm, "trainer", stage.mode),
    ppoEpochs: stage.trainer.ppoEpochs,
    miniBatchSize: stage.trainer.ppoMiniBatchSize,
    temperature,
    memoryModels,
  });
  const checkpoints = new StageCheckpoints(
    stage,
    ctx.stageDir,
    trainStep,
    { ...checkpointSources, critic },
    resumed?.dir,
  );
  const free = owned.move();
  return { trainer, trainStep, critic, checkpoints, [Symbol.dispose]: () => free.dispose() };
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
    momentsDtype: o.momentsDtype === "bfloat16" ? "bf16" : "f32",
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
    gradientCheckpointing: stage.trainer.gradientCheckpointing ?? "auto",
  });
}
