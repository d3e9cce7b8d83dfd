/**
 * Modes `both` and `explore` of a stage. `both`: the explorer and the trainer run as two
 * cooperating async loops over one experience buffer, with the synchronizer moving weights from
 * the trainer's model to the explorer's (GPU-side copies) and deciding who waits. `explore`: the
 * explorer alone, writing the persistent buffer for a later `train` run. Each train step's row
 * in metrics.jsonl holds that step's explore metrics too; evaluations get rows of their own at
 * the policy version they measured.
 */

import { AuxiliaryModels } from "../auxiliary/auxiliary_models.ts";
import { ExperienceBuffer } from "../buffer/experience_buffer.ts";
import { createOperators } from "../buffer/operators/mod.ts";
import { Taskset } from "../buffer/taskset.ts";
import type { StageConfig } from "../config/run_config.ts";
import { configureSampleStrategy } from "../algorithm/sample_strategy.ts";
import type { ResolvedAlgorithm } from "./algorithm_setup.ts";
import { cursorForVersion, Explorer, EXPLORER_STATE_FILE, type ExplorerState } from "./explorer.ts";
import { cloneModel, loadStagePolicy } from "./policy_setup.ts";
import {
  evalDue,
  logSkipped,
  openEvalTasksets,
  rewindBuffer,
  rolloutModel,
  saveStageCheckpoint,
  type StageContext,
  type StageOutcome,
  tasksetConfig,
  trainStepFor,
} from "./stage_parts.ts";
import { startStageServer } from "../serve/stage_server.ts";
import { Synchronizer } from "./synchronizer.ts";
import { createStageTrainer } from "./trainer_setup.ts";
import type { CriticStep } from "../trainer/critic.ts";
import { openExpertBuffer } from "./expert_buffer.ts";

/** Runs `stage` in mode `both` (`train` true) or `explore`. */
export async function runExploreTrain(
  stage: StageConfig,
  algorithm: ResolvedAlgorithm,
  ctx: StageContext,
  train: boolean,
): Promise<StageOutcome> {
  const { stageDir, monitor, log, stepOffset } = ctx;
  const section = stage.buffer.explorerInput.taskset;
  if (!section) {
    throw new Error(`Stage "${stage.stageName}" explores but has no buffer.explorer_input.taskset`);
  }
  const policy = await loadStagePolicy(stage, stageDir, ctx.gpu, {
    previousCheckpoint: ctx.previousCheckpoint,
    resume: train,
  });
  log(`policy from ${policy.source}`);
  const trainerModel = policy.model;
  const explorerModel = train ? await cloneModel(trainerModel) : trainerModel;
  const startVersion = policy.resumed?.trainerState.step ?? 0;

  const tokenizer = explorerModel.tokenizer;
  const taskset = await Taskset.open(
    tasksetConfig(stage, section, algorithm.repeatTimes, false, tokenizer),
  );
  logSkipped(taskset, log);
  const evalTasksets = await openEvalTasksets(stage, log, tokenizer);
  const bufferDir = `${stageDir}/experiences`;
  const statePath = `${stageDir}/${EXPLORER_STATE_FILE}`;
  const savedState = stage.continueFromCheckpoint ? await readExplorerState(statePath) : undefined;
  if (train && savedState) {
    await rewindBuffer(bufferDir, (policy.resumed?.trainerState.buffer_retired ?? []) as string[]);
  }
  const stepSize = stage.buffer.batchSize * algorithm.repeatTimes;
  const bufferSection = stage.buffer.trainerInput.experienceBuffer;
  const buffer = await ExperienceBuffer.open(bufferDir, {
    capacity: bufferSection.capacity ??
      (train ? Math.max(4, stage.synchronizer.syncOffset + 2) * stepSize : Number.MAX_SAFE_INTEGER),
    maxStaleness: bufferSection.maxStaleness,
    policyVersion: startVersion,
    replay: bufferSection.replay,
  });
  const rollout = rolloutModel(stage, explorerModel, stage.seed + 7919 * (savedState?.step ?? 0));
  rollout.setPolicyVersion(startVersion);
  await using auxiliaryModels = await AuxiliaryModels.open(
    stage.explorer.auxiliaryModels,
    ctx.gpu,
    stage.seed,
  );
  await using server = await startStageServer(stage, rollout, auxiliaryModels, log);
  const explorer = new Explorer({
    model: rollout,
    services: { openai: server, auxiliaryModels, rewardFnArgs: section.rewardFnArgs },
    runnerNum: stage.explorer.runnerNum,
    maxTimeout: stage.explorer.maxTimeout,
    maxRetryTimes: stage.explorer.maxRetryTimes,
    taskset,
    evalTasksets,
    batchSize: stage.buffer.batchSize,
    buffer,
    operators: createOperators(stage.dataProcessor.experiencePipeline.operators),
    advantageFn: algorithm.advantageInTrainer ? undefined : algorithm.advantageFn,
    dynamicSampling: algorithm.dynamicSampling,
    stateDir: stageDir,
    log,
    signal: ctx.signal,
  });
  // Trained from a checkpoint, the buffer keeps only rollouts of versions up to it: the
  // explorer goes back to the last step that sampled no newer policy.
  if (savedState) explorer.restore(train ? cursorForVersion(savedState, startVersion) : savedState);
  log(
    `taskset ${taskset.files.join(", ")}: ${taskset.size} tasks; explore step ${explorer.step}, ` +
      `train step ${startVersion}; ${buffer.metrics().restored} experiences restored`,
  );

  const totalSteps = stage.buffer.totalSteps ?? Infinity;
  const controller = new AbortController();
  const signal = AbortSignal.any([ctx.signal, controller.signal]);
  const sync = new Synchronizer({
    ...stage.synchronizer,
    style: stage.synchronizer.syncStyle,
    interval: stage.synchronizer.syncInterval,
    offset: stage.synchronizer.syncOffset,
    trainerModel,
    explorerModel,
    onSync: (version) => {
      rollout.setPolicyVersion(version);
      buffer.setPolicyVersion(version);
    },
    initialVersion: startVersion,
    initialExplored: explorer.step,
    signal,
  });
  const exploreRows = new Map<number, Record<string, number>>();
  let lastEval: Record<string, number> = {};
  let evaluatedVersion = -1;
  const evaluate = async (version: number) => {
    evaluatedVersion = version;
    lastEval = await explorer.evaluate();
    await monitor.log(stepOffset + version, lastEval);
  };

  const explorerLoop = async () => {
    try {
      while (explorer.step < totalSteps) {
        const step = explorer.step + 1;
        if (train) await sync.beforeExploreStep(step);
        const version = rollout.policyVersion;
        if (version !== evaluatedVersion && evalDue(stage, version, startVersion)) {
          await evaluate(version);
        }
        const result = await explorer.exploreStep();
        if (!result.drew) break;
        if (train) {
          exploreRows.set(step, result.metrics);
          sync.exploreStepDone(step);
        } else {
          await monitor.log(stepOffset + step, { ...result.metrics, ...bufferMetrics(buffer) });
        }
      }
    } finally {
      sync.explorerFinished();
    }
  };

  let trainedSteps = startVersion;
  let finalCheckpoint = policy.resumed?.dir;
  const trainStep = train
    ? trainStepFor(stage, algorithm, trainerModel, stage.buffer.totalSteps)
    : undefined;
  let freeTrainer = () => {};
  let critic: CriticStep | undefined;
  const trainerLoop = async () => {
    if (!trainStep) return;
    try {
      if (policy.resumed) trainStep.optimizer.loadState(policy.resumed.optimizerState);
      const stageTrainer = await createStageTrainer(
        stage,
        algorithm,
        ctx,
        trainerModel,
        trainStep,
        algorithm.advantageInTrainer,
        policy.resumed?.dir,
      );
      const { trainer } = stageTrainer;
      freeTrainer = stageTrainer.destroy;
      critic = stageTrainer.critic;
      const buffers = {
        experience: buffer,
        expert: algorithm.sampleStrategy === "mix"
          ? await openExpertBuffer(
            stage,
            `${stageDir}/expert`,
            trainerModel.tokenizer!,
            trainerModel.config.maxPositions,
            log,
          )
          : undefined,
      };
      const strategy = configureSampleStrategy(
        algorithm.sampleStrategy,
        algorithm.sampleStrategyArgs,
        buffers,
      );
      const batchSize = stage.buffer.trainBatchSize ?? stepSize;
      while (trainedSteps < totalSteps) {
        const step = trainedSteps + 1;
        await sync.beforeTrainStep(step);
        await sync.untilExplored(step);
        const available = buffer.metrics().available;
        if (available === 0 && sync.explorerDone) break;
        const row: Record<string, number> = { ...exploreRows.get(step) };
        exploreRows.delete(step);
        if (available > 0) {
          const sample = await strategy.entry.sample(
            buffers,
            Math.min(batchSize, available),
            strategy.args,
            { policyVersion: trainedSteps, signal },
          );
          Object.assign(
            row,
            sample.metrics,
            await trainer.train(sample.experiences, {
              lrStep: step - 1,
              isExpert: sample.isExpert,
            }),
          );
        } else {
          log(`train step ${step}: no experience survived the pipeline; weights unchanged`);
        }
        trainedSteps = step;
        await sync.afterTrainStep(step);
        // The row goes first: a resume from this step's checkpoint must find it.
        await monitor.log(stepOffset + step, {
          ...row,
          ...sync.metrics(),
          ...bufferMetrics(buffer),
        });
        const every = stage.trainer.saveInterval;
        if (every > 0 && step % every === 0) {
          finalCheckpoint = await saveStageCheckpoint(
            stage,
            stageDir,
            step,
            trainStep,
            { bufferDir, critic },
          );
        }
      }
      await buffers.expert?.close();
    } finally {
      sync.trainerFinished();
    }
  };

  const outcomes = await Promise.allSettled([
    explorerLoop().catch((err) => {
      controller.abort(err);
      throw err;
    }),
    trainerLoop().catch((err) => {
      controller.abort(err);
      throw err;
    }),
  ]);
  const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === "rejected");
  if (failed) throw failed.reason;
  for (const [step, row] of exploreRows) await monitor.log(stepOffset + step, row);

  if (trainStep) {
    if (finalCheckpoint === undefined || !finalCheckpoint.endsWith(`step_${trainedSteps}`)) {
      finalCheckpoint = await saveStageCheckpoint(
        stage,
        stageDir,
        trainedSteps,
        trainStep,
        { bufferDir, critic },
      );
    }
    if (sync.explorerVersion < trainedSteps) await sync.beforeExploreStep(Infinity);
  }
  const finalVersion = train ? trainedSteps : 0;
  if (evalTasksets.length && evaluatedVersion !== finalVersion) await evaluate(finalVersion);
  await buffer.close();
  rollout.destroy();
  trainStep?.destroy();
  freeTrainer();
  if (explorerModel !== trainerModel) explorerModel.destroy();
  trainerModel.destroy();
  return { steps: train ? trainedSteps : explorer.step, finalCheckpoint, lastEval };
}

/** Buffer counters for the metrics row. */
function bufferMetrics(buffer: ExperienceBuffer): Record<string, number> {
  const m = buffer.metrics();
  return {
    "buffer/size": m.size,
    "buffer/dropped_stale": m.droppedStale,
    "buffer/rejected_future": m.rejectedFuture,
    "buffer/staleness_mean": m.meanStalenessTaken,
  };
}

/** The explorer's saved cursor, if any. */
async function readExplorerState(path: string): Promise<ExplorerState | undefined> {
  try {
    return JSON.parse(await Deno.readTextFile(path)) as ExplorerState;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw new Error(`Cannot resume from ${path}: ${(err as Error).message}`);
  }
}
