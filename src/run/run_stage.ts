/**
 * Runs one loaded stage with its resolved algorithm in its mode: hands over to the mode's
 * runner. With a cluster backend (`cluster.backend: nats`, which `RFT_NATS_URL` sets, or
 * `local`: `local_pair.ts`), mode `explore` runs one explorer of the cluster run and mode `train`
 * (of an RL algorithm) its trainer; an explorer skips a stage that trains on a dataset (sft,
 * dpo: the same config on every machine runs them on the trainer's alone).
 */

import { exploredTasksets, type StageConfig } from "../config/run_config.ts";
import type { ResolvedAlgorithm } from "../algorithm/resolve_algorithm.ts";
import { runBench } from "./mode_bench.ts";
import { runClusterExplorer } from "./mode_cluster_explore.ts";
import { runClusterTrainer } from "./mode_cluster_train.ts";
import { runExploreOnly, runExploreTrain } from "./mode_explore_train.ts";
import type { StageContext, StageOutcome } from "./stage_context.ts";
import { runTrainOnly } from "./mode_train.ts";
import { InputError } from "../util/input_error.ts";

/** Runs `stage` (see the file comment). */
export async function runStage(
  stage: StageConfig,
  algorithm: ResolvedAlgorithm,
  ctx: StageContext,
): Promise<StageOutcome> {
  const { backend } = stage.cluster;
  const rl = algorithm.type.schema === "experience";
  if (backend !== "none" && stage.mode === "explore" && !rl) {
    ctx.log(
      `${stage.algorithm.algorithmType} trains on a dataset: the trainer runs this stage; this explorer skips it`,
    );
    return { steps: 0, lastEval: {}, skipped: true };
  }
  const joins = backend !== "none" && (stage.mode === "explore" || (stage.mode === "train" && rl));
  const url = !joins ? undefined : backend === "local" ? await ctx.localUrl?.() : stage.cluster.url;
  if (joins && url === undefined) {
    ctx.log("the trainer finished this stage; this explorer skips it");
    return { steps: 0, lastEval: {}, skipped: true };
  }
  if (url && stage.mode === "explore") {
    return await runClusterExplorer(stage, algorithm, ctx, url);
  }
  if (url && stage.mode === "train") {
    checkClusterTaskset(stage);
    return await runClusterTrainer(stage, algorithm, ctx, url);
  }
  if (backend !== "none" && stage.mode === "both") {
    throw new InputError(
      `${stage.stageName}: cluster.backend ${backend} runs mode explore or train; expected one of them, found both (--set mode=train on the trainer's machine, mode=explore on the explorers')`,
    );
  }
  switch (stage.mode) {
    case "both":
      return await runExploreTrain(stage, algorithm, ctx);
    case "explore":
      return await runExploreOnly(stage, algorithm, ctx);
    case "train":
      return await runTrainOnly(stage, algorithm, ctx);
    case "bench":
      return await runBench(stage, ctx);
  }
}

/**
 * A cluster trainer publishes its taskset's batches ahead of the explorers, so nothing learns from
 * rewards: one taskset whose selector needs no feedback, without a lesson.
 */
export function checkClusterTaskset(stage: StageConfig): void {
  const sections = exploredTasksets(stage.buffer.explorerInput);
  const [section] = sections;
  const found = sections.length !== 1
    ? `${sections.length} tasksets`
    : section.selector === "difficulty_based"
    ? 'selector "difficulty_based"'
    : section.lesson
    ? "a lesson"
    : undefined;
  if (found === undefined) return;
  throw new InputError(
    `${stage.stageName}: buffer.explorer_input: a cluster run feeds its explorers one taskset drawn ahead, without reward feedback; expected one taskset without difficulty_based or lesson, found ${found}`,
  );
}
