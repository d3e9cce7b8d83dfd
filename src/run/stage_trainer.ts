/**
 * A stage's trainer: `openStageTrainer` builds the TrainStep (the resolved algorithm's losses,
 * the stage's optimizer and clip) and the Trainer around it, and `StageTrainer.run` runs the
 * Trainer's loop as the stage configures it, the one way every runner (mode train, mode both, a
 * cluster trainer) trains. Built with it: the frozen reference model when the loss needs reference log-probs (the
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
import type { OptimizerConfig } from "../trainer/optimizer_graph.ts";
import { TrainStep } from "../trainer/train_step.ts";
import { advantageFnFor, type ResolvedAlgorithm } from "../algorithm/resolve_algorithm.ts";
import { loadStagePolicy, rolloutDtype, type StagePolicy } from "./stage_policy.ts";
import { matricesDtype } from "../model/weight_transfer.ts";
import { StageCheckpoints, type StageCheckpointSources } from "./stage_checkpoint.ts";
import type { StageContext } from "./stage_context.ts";
import { Trainer, type TrainerSync } from "../trainer/trainer.ts";
import { formatMemoryReport, measureMemory, memoryReport } from "../trainer/memory_report.ts";
import type { BatchSource } from "../buffer/batch_source.ts";
import type { StageEvaluation } from "./stage_eval.ts";

/** What a run of {@link StageTrainer} takes besides its batches. */
export interface StageTrainRun {
  /** Train steps already done (a resumed stage's checkpoint step). */
  startStep: number;
  /** The synchronizer the loop waits on (when an explorer runs). */
  sync?: TrainerSync;
  /** The evaluation of the model being trained (mode train, a cluster trainer). */
  evaluation?: StageEvaluation;
  /** More metrics for each step's row (a cluster trainer's live explorers). */
  rowMetrics?: () => Promise<Record<string, number>>;
  /** Ends the loop; default the stage's signal. */
  signal?: AbortSignal;
}

/** A stage's trainer with its train step, critic and checkpoints; disposing frees them all. */
export class StageTrainer implements Disposable {
  readonly #free: DisposableStack;

  constructor(
    readonly stage: StageConfig,
    readonly ctx: StageContext,
    readonly trainer: Trainer,
    readonly checkpoints: StageCheckpoints,
    free: DisposableStack,
  ) {
    this.#free = free;
  }

  /**
   * The Trainer's loop over `source` as the stage configures it: `train_batch_size` rows a step
   * from `startStep` until `total_steps` or the source's end, each step's row logged at its
   * step in the stage, a checkpoint every `save_interval` steps, and before each step the
   * evaluation's rollout model moved to the weights' version and an evaluation when due. Returns
   * the last step done.
   */
  run(source: BatchSource, run: StageTrainRun): Promise<number> {
    const { stage, ctx } = this;
    const { evaluation, rowMetrics } = run;
    return this.trainer.run(source, {
      batchSize: stage.buffer.trainBatchSize,
      startStep: run.startStep,
      totalSteps: stage.buffer.totalSteps ?? Infinity,
      sync: run.sync,
      beforeStep: evaluation && (async (version) => {
        evaluation.rollout.setPolicyVersion(version);
        await evaluation.evaluator.maybeEvaluate(version);
      }),
      logRow: async (step, metrics) =>
        await ctx.monitor.log(step, { ...metrics, ...await rowMetrics?.() }),
      checkpoint: { every: stage.trainer.saveInterval, save: (s) => this.checkpoints.save(s) },
      log: ctx.log,
      signal: run.signal ?? ctx.signal,
    });
  }

  /**
   * The final checkpoint at `steps` and then, with `evaluation`, the last evaluation at that
   * version; returns the checkpoint's directory.
   */
  async finish(steps: number, evaluation?: StageEvaluation): Promise<string> {
    const finalCheckpoint = await this.checkpoints.saveFinal(steps);
    if (evaluation) {
      evaluation.rollout.setPolicyVersion(steps);
      await evaluation.evaluator.finalEvaluate(steps);
    }
    return finalCheckpoint;
  }

  /** Frees the train step, the reference model and the critic. */
  [Symbol.dispose](): void {
    this.#free.dispose();
  }
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
  const trainStep = owned.use(trainStepFor(stage, algorithm, model));
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
    measureMemory: () =>
      measureMemory(model.gpu, {
        models: { trainer: model, reference, ...memoryModels },
        optimizer: trainStep.optimizer,
      }),
  });
  const checkpoints = new StageCheckpoints(
    stage,
    ctx.stageDir,
    trainStep,
    { ...checkpointSources, critic },
    resumed?.dir,
  );
  return new StageTrainer(stage, ctx, trainer, checkpoints, owned.move());
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
  const step = new CriticStep(critic, {
    optimizer: { ...optimizerFor(stage), lr: stage.trainer.criticLr },
    gradClip: gradClipFor(stage),
    cliprangeValue: stage.trainer.cliprangeValue,
  });
  if (saved) step.optimizer.loadState(saved.optimizerState);
  return step;
}

/** The stage's `algorithm.optimizer`, its decays spanning `buffer.total_steps`. */
function optimizerFor(stage: StageConfig): OptimizerConfig {
  return { ...stage.algorithm.optimizer, totalSteps: stage.buffer.totalSteps };
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
): TrainStep {
  return new TrainStep(model, {
    policyLoss: algorithm.policyLoss,
    optimizer: optimizerFor(stage),
    gradClip: gradClipFor(stage),
    temperature: stage.model.temperature > 0 ? stage.model.temperature : 1,
    klLoss: algorithm.klLoss,
    entropyLoss: algorithm.entropyLoss,
    maxTokensPerMicroBatch: stage.trainer.maxTokensPerMicroBatch,
    packSequences: stage.trainer.packSequences,
    gradientCheckpointing: stage.trainer.gradientCheckpointing ?? "auto",
  });
}
