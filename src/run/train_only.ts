/**
 * Mode `train` of a stage: the trainer alone. Its batches come from demonstrations or preference
 * pairs (`buffer.trainer_input.sft_warmup_dataset`) when the algorithm trains on such data (sft,
 * dpo; DPO's reference model is the stage's initial policy), else from
 * a persistent experience buffer written by an `explore` run (`trainer_input.experience_buffer.
 * path`, default the stage's own `experiences/`). Evaluates the model being trained on the eval
 * tasksets at the start, every `eval_interval` steps and at the end.
 */

import { ExperienceBuffer } from "../buffer/experience_buffer.ts";
import type { StageConfig } from "../config/run_config.ts";
import type { ResolvedAlgorithm } from "./algorithm_setup.ts";
import { Explorer } from "./explorer.ts";
import { loadStagePolicy } from "./policy_setup.ts";
import { type BatchSource, datasetSource } from "./dataset_source.ts";
import {
  evalDue,
  openEvalTasksets,
  rolloutModel,
  saveStageCheckpoint,
  type StageContext,
  type StageOutcome,
  trainStepFor,
} from "./stage_parts.ts";
import { createStageTrainer } from "./trainer_setup.ts";

/** Runs `stage` in mode `train`. */
export async function runTrainOnly(
  stage: StageConfig,
  algorithm: ResolvedAlgorithm,
  ctx: StageContext,
): Promise<StageOutcome> {
  const { stageDir, monitor, log, stepOffset } = ctx;
  const policy = await loadStagePolicy(stage, stageDir, ctx.gpu, {
    previousCheckpoint: ctx.previousCheckpoint,
    resume: true,
  });
  log(`policy from ${policy.source}`);
  const model = policy.model;
  const startStep = policy.resumed?.trainerState.step ?? 0;
  const source = algorithm.type.schema === "experience"
    ? await bufferSource(stage, stageDir)
    : await datasetSource(stage, model.tokenizer!, model.config.maxPositions, log, {
      totalEpochs: stage.buffer.totalEpochs,
    });
  const savedCursor = policy.resumed?.trainerState.data_cursor;
  if (savedCursor !== undefined) (source as { restore?(c: unknown): void }).restore?.(savedCursor);
  const batchSize = stage.buffer.trainBatchSize ?? stage.buffer.batchSize;
  const trainStep = trainStepFor(stage, algorithm, model, stage.buffer.totalSteps);
  if (policy.resumed) trainStep.optimizer.loadState(policy.resumed.optimizerState);
  const { trainer, critic, destroy: freeTrainer } = await createStageTrainer(
    stage,
    algorithm,
    ctx,
    model,
    trainStep,
    true,
    policy.resumed?.dir,
  );
  const evalTasksets = await openEvalTasksets(stage, log, model.tokenizer);
  const rollout = evalTasksets.length ? rolloutModel(stage, model, stage.seed) : undefined;
  const evaluator = rollout &&
    new Explorer({
      model: rollout,
      runnerNum: stage.explorer.runnerNum,
      maxTimeout: stage.explorer.maxTimeout,
      maxRetryTimes: stage.explorer.maxRetryTimes,
      evalTasksets,
      batchSize: stage.buffer.batchSize,
      operators: [],
      stateDir: stageDir,
      log,
      signal: ctx.signal,
    });
  let lastEval: Record<string, number> = {};
  let evaluated = -1;
  const evaluate = async (step: number) => {
    if (!evaluator || !rollout) return;
    rollout.setPolicyVersion(step);
    evaluated = step;
    lastEval = await evaluator.evaluate();
    await monitor.log(stepOffset + step, lastEval);
  };

  const totalSteps = stage.buffer.totalSteps ?? Infinity;
  let step = startStep;
  let finalCheckpoint = policy.resumed?.dir;
  let skippedTotal = 0;
  while (step < totalSteps) {
    ctx.signal.throwIfAborted();
    if (evalDue(stage, step, startStep)) await evaluate(step);
    const next = await source.next(batchSize);
    if (!next) break;
    skippedTotal += next.skipped;
    step++;
    const metrics = next.batch.length ? await trainer.train(next.batch, { lrStep: step - 1 }) : {};
    metrics["data/skipped_rows_total"] = skippedTotal;
    // The row goes first: a resume from this step's checkpoint must find it.
    await monitor.log(stepOffset + step, metrics);
    const every = stage.trainer.saveInterval;
    if (every > 0 && step % every === 0) {
      finalCheckpoint = await saveStageCheckpoint(stage, stageDir, step, trainStep, {
        extra: { data_cursor: source.cursor() },
        critic,
      });
    }
  }
  if (finalCheckpoint === undefined || !finalCheckpoint.endsWith(`step_${step}`)) {
    finalCheckpoint = await saveStageCheckpoint(stage, stageDir, step, trainStep, {
      extra: { data_cursor: source.cursor() },
      critic,
    });
  }
  if (evalTasksets.length && evaluated !== step) await evaluate(step);
  await source.close();
  rollout?.destroy();
  trainStep.destroy();
  freeTrainer();
  model.destroy();
  return { steps: step, finalCheckpoint, lastEval };
}

/** Batches from a persistent experience buffer (what an `explore` run wrote), each used once. */
async function bufferSource(stage: StageConfig, stageDir: string): Promise<BatchSource> {
  const dir = stage.buffer.trainerInput.experienceBuffer.path ?? `${stageDir}/experiences`;
  const buffer = await ExperienceBuffer.open(dir, { capacity: Number.MAX_SAFE_INTEGER });
  await buffer.close();
  return {
    async next(size) {
      const available = buffer.metrics().available;
      if (available === 0) return null;
      return { batch: await buffer.take(Math.min(size, available)), skipped: 0 };
    },
    cursor: () => null,
    close: () => Promise.resolve(),
  };
}
