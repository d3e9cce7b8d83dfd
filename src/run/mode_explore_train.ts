/**
 * Modes `both` and `explore` of a stage. `both`: the Explorer's loop and the Trainer's loop run
 * concurrently over one experience buffer, the Synchronizer moving weights from the trainer's
 * model to the explorer's (GPU-side copies) and deciding who waits; each train step's row holds
 * that step's explore metrics too. `explore`: the explorer alone, writing the persistent buffer
 * for a later `train` run. Evaluations get rows of their own at the policy version they measured.
 * Everything a stage opens is freed (`using`) however it ends.
 */

import type { StageConfig } from "../config/run_config.ts";
import { Synchronizer } from "../sync/synchronizer.ts";
import { copyWeights } from "../sync/weight_copy.ts";
import { bufferMetrics, sampleStrategySource } from "../trainer/sample_source.ts";
import type { ResolvedAlgorithm } from "../algorithm/resolve_algorithm.ts";
import { openExpertBuffer } from "../buffer/expert_buffer.ts";
import { openStageExplorer } from "./stage_explorer.ts";
import { cloneModel, loadStagePolicy, rolloutDtype } from "./stage_policy.ts";
import type { StageContext, StageOutcome } from "./stage_context.ts";
import { stageDataset } from "./stage_tasksets.ts";
import { openStageTrainer } from "./stage_trainer.ts";

/** Runs `stage` in mode `both` (see the file comment). */
export async function runExploreTrain(
  stage: StageConfig,
  algorithm: ResolvedAlgorithm,
  ctx: StageContext,
): Promise<StageOutcome> {
  const { stageDir, monitor } = ctx;
  const policy = await loadStagePolicy(stage, stageDir, ctx.gpu, { ...ctx, resume: true });
  ctx.log(`policy from ${policy.source}`);
  using trainerModel = policy.model;
  using explorerModel = await cloneModel(trainerModel, rolloutDtype(stage, trainerModel));
  const startVersion = policy.resumed?.trainerState.step ?? 0;
  await using side = await openStageExplorer(stage, algorithm, ctx, explorerModel, {
    startVersion,
    resumedRetired: (policy.resumed?.trainerState.buffer_retired ?? []) as string[],
  });
  const { explorer, evaluator, buffer, rollout } = side;
  using trainer = await openStageTrainer(stage, algorithm, ctx, trainerModel, {
    resumed: policy.resumed,
    checkpointSources: { bufferDir: `${stageDir}/experiences` },
    memoryModels: { explorer: explorerModel },
  });
  const strategy = algorithm.sampleStrategy;
  await using expert = strategy.name === "mix"
    ? await openExpertBuffer(`${stageDir}/expert`, ...stageDataset(stage, trainerModel, ctx.log, 1))
    : undefined;
  const controller = new AbortController();
  const signal = AbortSignal.any([ctx.signal, controller.signal]);
  const { syncStyle: style, syncInterval: interval, syncOffset: offset } = stage.synchronizer;
  const sync = new Synchronizer({
    style,
    interval,
    offset,
    copyWeights: (then) => copyWeights(trainerModel, explorerModel, then),
    onSync: (version) => {
      rollout.setPolicyVersion(version);
      buffer.setPolicyVersion(version);
    },
    initialVersion: startVersion,
    initialExplored: explorer.step,
    signal,
  });
  const buffers = { experience: buffer, expert };
  strategy.entry.check(strategy.args, buffers);
  const [, steps] = await bothOrAbort(controller, [
    explorer.run({
      totalSteps: stage.buffer.totalSteps ?? Infinity,
      sync,
      beforeStep: (version) => evaluator.maybeEvaluate(version),
      report: (step, metrics) => Promise.resolve(monitor.hold(step, metrics)),
    }),
    trainer.run(sampleStrategySource(strategy, buffers, () => sync.explorerDone), {
      startStep: startVersion,
      sync,
      signal,
    }),
  ]);
  await monitor.logHeld();
  const finalCheckpoint = await trainer.finish(steps);
  await sync.finalSync();
  await evaluator.finalEvaluate(steps);
  return { steps, finalCheckpoint, lastEval: evaluator.last };
}

/** Runs `stage` in mode `explore` (see the file comment). */
export async function runExploreOnly(
  stage: StageConfig,
  algorithm: ResolvedAlgorithm,
  ctx: StageContext,
): Promise<StageOutcome> {
  const policy = await loadStagePolicy(stage, ctx.stageDir, ctx.gpu, {
    ...ctx,
    resume: false,
    frozen: true,
  });
  ctx.log(`policy from ${policy.source}`);
  using model = policy.model;
  await using side = await openStageExplorer(stage, algorithm, ctx, model, { startVersion: 0 });
  const { explorer, evaluator, buffer } = side;
  const steps = await explorer.run({
    totalSteps: stage.buffer.totalSteps ?? Infinity,
    beforeStep: (version) => evaluator.maybeEvaluate(version),
    report: (step, metrics) => ctx.monitor.log(step, { ...metrics, ...bufferMetrics(buffer) }),
  });
  await evaluator.finalEvaluate(0);
  return { steps, lastEval: evaluator.last };
}

/**
 * Awaits both loops; the first to fail aborts the other through `controller`, and its error is
 * thrown once both have ended (so nothing is freed under a loop still running).
 */
async function bothOrAbort<A, B>(
  controller: AbortController,
  loops: [Promise<A>, Promise<B>],
): Promise<[A, B]> {
  const abortOnFailure = <T>(loop: Promise<T>) =>
    loop.catch((err) => {
      controller.abort(err);
      throw err;
    });
  const [a, b] = await Promise.allSettled([abortOnFailure(loops[0]), abortOnFailure(loops[1])]);
  if (a.status === "rejected") throw a.reason;
  if (b.status === "rejected") throw b.reason;
  return [a.value, b.value];
}
