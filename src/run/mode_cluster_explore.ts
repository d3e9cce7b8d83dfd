/**
 * Mode `explore` of a cluster run (`cluster.backend: nats`): this process is one of the run's
 * explorers. Its Explorer claims task batches from the run's work queue, loads the weights the
 * trainer published as the sync style says, publishes each step's experiences to the run's
 * experience stream, and then its completion record with the step's metrics (which the trainer
 * logs); the batch is acked last. Its own metrics.jsonl gets the same rows under its own step
 * count. It ends when the trainer marks the run done. Evaluation is the trainer's.
 */

import { ExperiencePublisher } from "../cluster/experience_publisher.ts";
import { heartbeat, registerExplorer } from "../cluster/explorer_registry.ts";
import { RemoteExplorerSync } from "../cluster/remote_explorer_sync.ts";
import { TaskQueue } from "../cluster/task_queue.ts";
import type { StageConfig } from "../config/run_config.ts";
import type { ResolvedAlgorithm } from "../algorithm/resolve_algorithm.ts";
import { openStageExplorer } from "./stage_explorer.ts";
import { loadStagePolicy } from "./stage_policy.ts";
import type { StageContext, StageOutcome } from "./stage_context.ts";
import { openStageLink } from "./stage_link.ts";

/** Runs `stage` as an explorer of the cluster run at `url` (see the file comment). */
export async function runClusterExplorer(
  stage: StageConfig,
  algorithm: ResolvedAlgorithm,
  ctx: StageContext,
  url: string,
): Promise<StageOutcome> {
  const { log, signal } = ctx;
  // The stage's initial weights; with LoRA, an adapter the trainer's syncs overwrite.
  const policy = await loadStagePolicy(stage, ctx.stageDir, ctx.gpu, {
    ...ctx,
    resume: false,
    adapter: true,
  });
  using model = policy.model;
  await using link = await openStageLink(stage, url, ctx);
  const id = await registerExplorer(link);
  const queue = await TaskQueue.open(link, {
    explorer: id,
    ackWaitS: stage.cluster.ackWait,
    signal,
  });
  try {
    const sink = new ExperiencePublisher(link, () => queue.claimedSteps[0] ?? 0);
    await using side = await openStageExplorer(stage, algorithm, ctx, model, {
      startVersion: 0,
      remote: { tasks: queue, sink },
    });
    const { explorer, rollout } = side;
    let loadS = 0;
    const { syncStyle: style, syncInterval: interval, syncOffset: offset } = stage.synchronizer;
    const sync = new RemoteExplorerSync({
      link,
      queue,
      model,
      style,
      interval,
      offset,
      dtype: stage.cluster.weightDtype,
      onSync: (version, seconds) => {
        rollout.setPolicyVersion(version);
        loadS = seconds;
      },
      signal,
    });
    log(`cluster: explorer ${id} of run ${link.names.run} at ${url}`);
    const steps = await explorer.run({
      totalSteps: Infinity,
      sync,
      report: async (step, metrics) => {
        const row = { ...metrics, "explorer/id": id, "sync/load_s": loadS };
        await queue.finish(row);
        await heartbeat(link, id, step, sync.version);
        await ctx.monitor.log(step, row);
      },
    });
    log(`cluster: explorer ${id} ran ${steps} step(s); the run is done`);
    return { steps, lastEval: {} };
  } finally {
    queue.close();
  }
}
