/**
 * Mode `train` of a stage: the Trainer's loop alone. Its batches come from demonstrations or
 * preference pairs (`buffer.trainer_input.sft_warmup_dataset`) when the algorithm trains on such
 * data (sft, dpo; DPO's reference model is the stage's initial policy), else from a persistent
 * experience buffer written by an `explore` run (`trainer_input.experience_buffer.path`, default
 * the stage's own `experiences/`). Evaluates the model being trained on the eval tasksets at the
 * start, every `eval_interval` steps and at the end, with the stage's workflow services (an agent
 * workflow reaches the policy over the OpenAI API when the stage enables it). Everything it
 * opens is freed however it ends.
 */

import { type BatchSource, storedBufferSource } from "../buffer/batch_source.ts";
import type { StageConfig } from "../config/run_config.ts";
import type { ResolvedAlgorithm } from "../algorithm/resolve_algorithm.ts";
import { datasetSource } from "../buffer/dataset_source.ts";
import type { PolicyModel } from "../model/policy.ts";
import { loadStagePolicy } from "./stage_policy.ts";
import type { StageContext, StageOutcome } from "./stage_context.ts";
import { openTrainedEvaluation } from "./stage_eval.ts";
import { stageDataset } from "./stage_tasksets.ts";
import { openStageTrainer } from "./stage_trainer.ts";

/** Runs `stage` in mode `train`. */
export async function runTrainOnly(
  stage: StageConfig,
  algorithm: ResolvedAlgorithm,
  ctx: StageContext,
): Promise<StageOutcome> {
  const policy = await loadStagePolicy(stage, ctx.stageDir, ctx.gpu, { ...ctx, resume: true });
  ctx.log(`policy from ${policy.source}`);
  using model = policy.model;
  const startStep = policy.resumed?.trainerState.step ?? 0;
  const source = await trainOnlySource(stage, algorithm, ctx, model);
  const savedCursor = policy.resumed?.trainerState.data_cursor;
  if (savedCursor !== undefined) (source as { restore?(c: unknown): void }).restore?.(savedCursor);
  using trainer = await openStageTrainer(stage, algorithm, ctx, model, {
    resumed: policy.resumed,
    checkpointSources: { cursor: () => source.cursor() },
  });
  await using evaluation = await openTrainedEvaluation(stage, ctx, model, startStep, {
    services: true,
  });
  const steps = await trainer.run(source, { startStep, evaluation });
  const finalCheckpoint = await trainer.finish(steps, evaluation);
  await source.close();
  return { steps, finalCheckpoint, lastEval: evaluation?.evaluator.last ?? {} };
}

/** Demonstrations or preference pairs of the stage's dataset, else a stored experience buffer. */
async function trainOnlySource(
  stage: StageConfig,
  algorithm: ResolvedAlgorithm,
  ctx: StageContext,
  model: PolicyModel,
): Promise<BatchSource> {
  if (algorithm.type.schema !== "experience") {
    return await datasetSource(...stageDataset(stage, model, ctx.log, stage.buffer.totalEpochs));
  }
  const dir = stage.buffer.trainerInput.experienceBuffer.path ?? `${ctx.stageDir}/experiences`;
  return await storedBufferSource(dir);
}
