/**
 * Mode `train` of a cluster run (`cluster.backend: nats`) with an RL algorithm: this process is
 * the run's trainer, its explorers other processes. It publishes the taskset as the run's task
 * queue and its starting weights, reads the experience stream into its own experience buffer
 * (`cluster/experience_ingest.ts`), and runs the Trainer's loop over the sample strategy as in
 * one process, each train step waiting for its explore step and each sync point publishing the
 * weights (`cluster/remote_trainer_sync.ts`). Each step's row holds the metrics of the explorer
 * that ran that explore step (`explorer/id` names it). Evaluates as mode `train` does, then marks
 * the run done, which ends the explorers. Resumed, it rewinds its buffer to the checkpoint (as
 * mode `both` does); experiences of versions newer than the checkpoint are dropped by the buffer
 * and their explore steps not run again.
 */

import { ExperienceBuffer } from "../buffer/experience_buffer.ts";
import { logSkipped } from "../buffer/skipped_rows.ts";
import { Taskset } from "../buffer/taskset.ts";
import { ExperienceIngest } from "../cluster/experience_ingest.ts";
import { aliveExplorers } from "../cluster/explorer_registry.ts";
import { KV_KEYS, type NatsLink } from "../cluster/nats_link.ts";
import { RemoteTrainerSync } from "../cluster/remote_trainer_sync.ts";
import { feedTasks } from "../cluster/task_queue.ts";
import { newestWeights } from "../cluster/weight_broadcast.ts";
import { exploredTasksets, type StageConfig, type TasksetSection } from "../config/run_config.ts";
import type { PolicyModel } from "../model/policy.ts";
import { sampleStrategySource } from "../trainer/sample_source.ts";
import type { ResolvedAlgorithm } from "../algorithm/resolve_algorithm.ts";
import { loadStagePolicy, type StagePolicy } from "./stage_policy.ts";
import type { StageContext, StageOutcome } from "./stage_context.ts";
import { openStageLink } from "./stage_link.ts";
import { openTrainedEvaluation } from "./stage_eval.ts";
import { tasksetConfig } from "./stage_tasksets.ts";
import { openStageTrainer } from "./stage_trainer.ts";

/** Runs `stage` as the trainer of the cluster run at `url` (see the file comment). */
export async function runClusterTrainer(
  stage: StageConfig,
  algorithm: ResolvedAlgorithm,
  ctx: StageContext,
  url: string,
): Promise<StageOutcome> {
  const { stageDir, log, signal, monitor } = ctx;
  const [section] = exploredTasksets(stage.buffer.explorerInput);
  if (!section) {
    throw new Error(`Stage "${stage.stageName}" trains a cluster run but has no taskset`);
  }
  const policy = await loadStagePolicy(stage, stageDir, ctx.gpu, { ...ctx, resume: true });
  log(`policy from ${policy.source}`);
  using model = policy.model;
  const startStep = policy.resumed?.trainerState.step ?? 0;
  await using link = await openStageLink(stage, url, ctx);
  const batches = await publishTasks(stage, section, link, model, log);
  const bufferDir = `${stageDir}/experiences`;
  await using buffer = await openIngestBuffer(stage, bufferDir, startStep, policy.resumed);
  const ingest = await ExperienceIngest.start(link, buffer, {
    stateDir: stageDir,
    ackWaitS: stage.cluster.ackWait,
    log,
    onStepDone: (done) => monitor.hold(done.step, done.metrics),
  });
  ingest.totalSteps = batches;
  await ingest.replayDone(startStep);
  try {
    using trainer = await openStageTrainer(stage, algorithm, ctx, model, {
      resumed: policy.resumed,
      checkpointSources: { bufferDir },
    });
    const { syncInterval: interval, syncOffset: offset } = stage.synchronizer;
    const dtype = stage.cluster.weightDtype;
    const sync = new RemoteTrainerSync({
      link,
      ingest,
      buffer,
      model,
      interval,
      offset,
      dtype,
      signal,
    });
    if ((await newestWeights(link))?.version !== startStep) await sync.publish(startStep);
    log(
      `cluster: trainer of run ${link.names.run} at ${url}: ${batches} task batches, ` +
        `train step ${startStep}, ${ingest.doneSteps} explore steps done`,
    );
    await using evaluation = await openTrainedEvaluation(stage, ctx, model, startStep, {
      services: false,
    });
    const buffers = { experience: buffer };
    const strategy = algorithm.sampleStrategy;
    strategy.entry.check(strategy.args, buffers);
    const steps = await trainer.run(sampleStrategySource(strategy, buffers, () => ingest.allDone), {
      startStep,
      sync,
      evaluation,
      rowMetrics: async () => ({ "cluster/explorers_alive": await aliveExplorers(link) }),
    });
    await link.write(KV_KEYS.run, { state: "done" });
    const finalCheckpoint = await trainer.finish(steps, evaluation);
    return { steps, finalCheckpoint, lastEval: evaluation?.evaluator.last ?? {} };
  } finally {
    await ingest.stop();
  }
}

/**
 * Publishes the taskset's batches (up to `total_steps`) as the run's task queue and marks the
 * run running; returns the number of batches.
 */
async function publishTasks(
  stage: StageConfig,
  section: TasksetSection,
  link: NatsLink,
  model: PolicyModel,
  log: (line: string) => void,
): Promise<number> {
  const taskset = await Taskset.open(tasksetConfig(stage, section, false, model.tokenizer));
  logSkipped(taskset, log);
  const totalSteps = stage.buffer.totalSteps ?? Infinity;
  const batches = await feedTasks(link, taskset, stage.buffer.batchSize, totalSteps);
  await link.write(KV_KEYS.run, { state: "running" });
  return batches;
}

/**
 * The buffer the experience stream is read into: rewound to the checkpoint resumed from (the
 * experiences taken after it were trained by weights lost with the process), unbounded unless
 * the config bounds it.
 */
async function openIngestBuffer(
  stage: StageConfig,
  dir: string,
  startStep: number,
  resumed: StagePolicy["resumed"],
): Promise<ExperienceBuffer> {
  if (stage.continueFromCheckpoint) {
    await ExperienceBuffer.rewind(dir, (resumed?.trainerState.buffer_retired ?? []) as string[]);
  }
  const section = stage.buffer.trainerInput.experienceBuffer;
  return await ExperienceBuffer.open(dir, {
    capacity: section.capacity ?? Number.MAX_SAFE_INTEGER,
    maxStaleness: section.maxStaleness,
    policyVersion: startStep,
    replay: section.replay,
  });
}
