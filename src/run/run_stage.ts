/**
 * Runs one resolved stage in its mode: resolves the algorithm and hands over to the mode's
 * runner.
 */

import type { StageConfig } from "../config/run_config.ts";
import { resolveAlgorithm } from "./algorithm_setup.ts";
import { runBench } from "./bench_mode.ts";
import { runExploreOnly, runExploreTrain } from "./explore_train.ts";
import type { StageContext, StageOutcome } from "./stage_context.ts";
import { runTrainOnly } from "./train_only.ts";

/** Runs `stage` (see the file comment). */
export async function runStage(stage: StageConfig, ctx: StageContext): Promise<StageOutcome> {
  const algorithm = resolveAlgorithm(stage.algorithm);
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
