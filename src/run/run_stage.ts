/**
 * Runs one resolved stage in its mode: resolves the algorithm, refuses what the run loop does
 * not support yet (a critic), and hands over to the mode's runner.
 */

import type { StageConfig } from "../config/run_config.ts";
import { resolveAlgorithm } from "./algorithm_setup.ts";
import { runBench } from "./bench_mode.ts";
import { runExploreTrain } from "./explore_train.ts";
import type { StageContext, StageOutcome } from "./stage_parts.ts";
import { runTrainOnly } from "./train_only.ts";

/** Runs `stage` (see the file comment). */
export async function runStage(stage: StageConfig, ctx: StageContext): Promise<StageOutcome> {
  const algorithm = resolveAlgorithm(stage.algorithm);
  if (algorithm.type.useCritic) {
    throw new Error(
      `Stage "${stage.stageName}": algorithm_type "${algorithm.name}" trains a critic, which rft run does not support yet (the critic exists as a library: src/trainer/critic.ts)`,
    );
  }
  switch (stage.mode) {
    case "both":
      return await runExploreTrain(stage, algorithm, ctx, true);
    case "explore":
      return await runExploreTrain(stage, algorithm, ctx, false);
    case "train":
      return await runTrainOnly(stage, algorithm, ctx);
    case "bench":
      return await runBench(stage, ctx);
  }
}
