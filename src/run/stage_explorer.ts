/**
 * Builds a stage's explorer side around a policy: its taskset, experience buffer (resumed and,
 * when the trainer resumes from a checkpoint, rewound to it; the experiences of an explore step
 * whose cursor was never saved are discarded, as that step is explored again), rollout model, the OpenAI server
 * and auxiliary models when configured, the Explorer at its saved cursor, and the Evaluator of
 * the eval tasksets. Disposing it frees the rollout model and closes the buffer and servers,
 * whichever way the stage ends. Runs no step.
 */

import { ExperienceBuffer } from "../buffer/experience_buffer.ts";
import { logSkipped } from "../buffer/skipped_rows.ts";
import { createOperators } from "../buffer/operators/mod.ts";
import { Taskset } from "../buffer/taskset.ts";
import { TasksetScheduler } from "../buffer/taskset_scheduler.ts";
import { exploredTasksets, type StageConfig } from "../config/run_config.ts";
import type { Evaluator } from "../explorer/evaluator.ts";
import {
  cursorForVersion,
  type ExperienceSink,
  Explorer,
  EXPLORER_STATE_FILE,
  type ExplorerState,
  type TaskSource,
} from "../explorer/explorer.ts";
import type { PolicyModel } from "../model/policy.ts";
import type { PolicyRolloutModel } from "../workflow/policy_rollout_model.ts";
import { advantageFnFor, type ResolvedAlgorithm } from "../algorithm/resolve_algorithm.ts";
import { rolloutModel } from "./stage_policy.ts";
import type { StageContext } from "./stage_context.ts";
import { stageEvaluator } from "./stage_eval.ts";
import { openStageServices } from "./stage_services.ts";
import { openEvalTasksets, tasksetConfig } from "./stage_tasksets.ts";

/** A stage's explorer side; `await using` frees it. */
export interface StageExplorer extends AsyncDisposable {
  explorer: Explorer;
  evaluator: Evaluator;
  buffer: ExperienceBuffer;
  rollout: PolicyRolloutModel;
}

/** Options of {@link openStageExplorer}. */
export interface StageExplorerOptions {
  /** The version the model holds (a resumed trainer's checkpoint step; 0 when fresh). */
  startVersion: number;
  /**
   * Set when a trainer resumed from a checkpoint: the buffer is rewound to the experiences the
   * checkpoint had consumed and the explorer to the last step that sampled no newer policy.
   */
  resumedRetired?: readonly string[];
  /**
   * Where tasks come from and experiences go when not the stage's own taskset and buffer (an
   * explorer of a cluster run: `cluster/`); the explorer then keeps no cursor of its own.
   */
  remote?: { tasks: TaskSource; sink: ExperienceSink };
}

/**
 * Tells the monitor the steps the tasksets last (as Trinity counts `total_steps` when unset:
 * every taskset through its epochs, a batch a step), when `total_steps` does not end the stage
 * sooner; not with lessons or dynamic sampling, which draw as they go.
 */
function reportPlannedSteps(
  stage: StageConfig,
  ctx: StageContext,
  tasks: TasksetScheduler,
  algorithm: ResolvedAlgorithm,
): void {
  if (algorithm.dynamicSampling || tasks.entries.some((e) => e.lesson !== undefined)) return;
  const draws = tasks.entries.reduce((n, e) => n + e.taskset.size * e.taskset.totalEpochs, 0);
  const planned = Math.ceil(draws / stage.buffer.batchSize);
  ctx.monitor.setStageTotal(Math.min(stage.buffer.totalSteps ?? Infinity, planned));
}

/** The explorer side of `stage` exploring with `model` (see the file comment). */
export async function openStageExplorer(
  stage: StageConfig,
  algorithm: ResolvedAlgorithm,
  ctx: StageContext,
  model: PolicyModel,
  options: StageExplorerOptions,
): Promise<StageExplorer> {
  const { stageDir, log } = ctx;
  const sections = exploredTasksets(stage.buffer.explorerInput);
  if (sections.length === 0) {
    throw new Error(`Stage "${stage.stageName}" explores but has no buffer.explorer_input.taskset`);
  }
  const tasks = new TasksetScheduler(
    await Promise.all(sections.map(async (section) => {
      const taskset = await Taskset.open(
        tasksetConfig(stage, section, false, model.tokenizer),
      );
      logSkipped(taskset, log);
      const { name, weight, lesson, featureKeys } = section;
      return { name, taskset, weight, lesson, featureKeys };
    })),
    log,
  );
  const evalTasksets = await openEvalTasksets(stage, log, model.tokenizer);
  const bufferDir = `${stageDir}/experiences`;
  const saved = stage.continueFromCheckpoint && !options.remote
    ? await readExplorerState(`${stageDir}/${EXPLORER_STATE_FILE}`)
    : undefined;
  const { startVersion, resumedRetired } = options;
  const rewinds = saved !== undefined && resumedRetired !== undefined;
  if (rewinds) await ExperienceBuffer.rewind(bufferDir, resumedRetired);
  await using owned = new AsyncDisposableStack();
  const bufferSection = stage.buffer.trainerInput.experienceBuffer;
  const buffer = owned.use(
    await ExperienceBuffer.open(bufferDir, {
      capacity: bufferSection.capacity ?? Number.MAX_SAFE_INTEGER,
      maxStaleness: bufferSection.maxStaleness,
      policyVersion: startVersion,
      replay: bufferSection.replay,
      discard: saved?.pending?.eids,
    }),
  );
  const rollout = owned.use(rolloutModel(stage, model, stage.seed + 7919 * (saved?.step ?? 0)));
  rollout.setPolicyVersion(startVersion);
  const { runnerNum, maxTimeout, maxRetryTimes } = stage.explorer;
  const { services } = owned.use(
    await openStageServices(stage, ctx, rollout, sections[0].rewardFnArgs),
  );
  const explorer = new Explorer({
    model: rollout,
    services,
    runnerNum,
    maxTimeout,
    maxRetryTimes,
    tasks: options.remote?.tasks ?? tasks,
    batchSize: stage.buffer.batchSize,
    buffer: options.remote?.sink ?? buffer,
    operators: createOperators(stage.dataProcessor.experiencePipeline.operators),
    advantageFn: advantageFnFor(algorithm, "explorer", stage.mode),
    dynamicSampling: algorithm.dynamicSampling,
    stateDir: stageDir,
    log,
    signal: ctx.signal,
  });
  if (saved) await explorer.restore(rewinds ? cursorForVersion(saved, startVersion) : saved);
  if (!options.remote) reportPlannedSteps(stage, ctx, tasks, algorithm);
  const files = tasks.entries.map(({ taskset }) => `${taskset.files.join(", ")}: ${taskset.size}`);
  const { restored, discarded } = buffer.metrics();
  const redone = discarded
    ? `, ${discarded} of explore step ${saved?.pending?.step} discarded`
    : "";
  log(
    `taskset ${files.join("; ")} tasks; explore step ${explorer.step}, ` +
      `train step ${startVersion}; ${restored} experiences restored${redone}`,
  );
  const evaluator = stageEvaluator(stage, ctx, evalTasksets, rollout, { startVersion, services });
  const free = owned.move();
  return { explorer, evaluator, buffer, rollout, [Symbol.asyncDispose]: () => free.disposeAsync() };
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
