/**
 * Mode `train` of a stage: the Trainer's loop alone. Its batches come from demonstrations or
 * preference pairs (`buffer.trainer_input.sft_warmup_dataset`) when the algorithm trains on such
 * data (sft, dpo; DPO's reference model is the stage's initial policy), else from a persistent
 * experience buffer written by an `explore` run (`trainer_input.experience_buffer.path`, default
 * the stage's own `experiences/`). Evaluates the model being trained on the eval tasksets at the
 * start, every `eval_interval` steps and at the end, with the stage's workflow services (an agent
 * workflow reaches the policy over the OpenAI API when the stage enables it). Everything it opens is freed however it ends.
 */

import { type BatchSource, storedBufferSource } from "../buffer/batch_source.ts";
import type { StageConfig } from "../config/run_config.ts";
import type { ResolvedAlgorithm } from "../algorithm/resolve_algorithm.ts";
import { datasetSource } from "../buffer/dataset_source.ts";
import { loadStagePolicy, rolloutModel } from "./stage_policy.ts";
import type { StageContext, StageOutcome } from "./stage_context.ts";
import { stageEvaluator } from "./stage_eval.ts";
import { openStageServices } from "./stage_services.ts";
import { openEvalTasksets, stageDataset } from "./stage_tasksets.ts";
import { openStageTrainer } from "./stage_trainer.ts";

/** Runs `stage` in mode `train`. */
export async function runTrainOnly(
  stage: StageConfig,
  algorithm: ResolvedAlgorithm,
  ctx: StageContext,
): Promise<StageOutcome> {
  const { stageDir, log } = ctx;
  const policy = await loadStagePolicy(stage, stageDir, ctx.gpu, { ...ctx, resume: true });
  log(`policy from ${policy.source}`);
  using model = policy.model;
  const startStep = policy.resumed?.trainerState.step ?? 0;
  const source: BatchSource = algorithm.type.schema === "experience"
    ? await storedBufferSource(
      stage.buffer.trainerInput.experienceBuffer.path ?? `${stageDir}/experiences`,
    )
    : await datasetSource(...stageDataset(stage, model, log, stage.buffer.totalEpochs));
  const savedCursor = policy.resumed?.trainerState.data_cursor;
  if (savedCursor !== undefined) (source as { restore?(c: unknown): void }).restore?.(savedCursor);
  using trainer = await openStageTrainer(stage, algorithm, ctx, model, {
    resumed: policy.resumed,
    checkpointSources: { cursor: () => source.cursor() },
  });
  const evalTasksets = await openEvalTasksets(stage, log, model.tokenizer);
  using rollout = evalTasksets.length ? rolloutModel(stage, model, stage.seed) : undefined;
  await using evalServices = rollout && await openStageServices(stage, ctx, rollout);
  const evaluator = rollout &&
    stageEvaluator(stage, ctx, evalTasksets, rollout, {
      startVersion: startStep,
      services: evalServices?.services,
    });
  const steps = await trainer.trainer.run(source, {
    batchSize: stage.buffer.trainBatchSize,
    startStep,
    totalSteps: stage.buffer.totalSteps ?? Infinity,
    beforeStep: async (version) => {
      rollout?.setPolicyVersion(version);
      await evaluator?.maybeEvaluate(version);
    },
    logRow: (step, metrics) => ctx.monitor.log(ctx.stepOffset + step, metrics),
    checkpoint: { every: stage.trainer.saveInterval, save: (s) => trainer.checkpoints.save(s) },
    log,
    signal: ctx.signal,
  });
  const finalCheckpoint = await trainer.checkpoints.saveFinal(steps);
  rollout?.setPolicyVersion(steps);
  await evaluator?.finalEvaluate(steps);
  await source.close();
  return { steps, finalCheckpoint, lastEval: evaluator?.last ?? {} };
}
