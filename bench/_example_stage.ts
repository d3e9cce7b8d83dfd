/**
 * The stage the train and step benchmarks run: by default the `grpo` stage of the built-in
 * example (examples/addition/config.yaml), read and resolved as `rft run` reads it, and its
 * initial policy built as the stage builds it when no earlier stage hands one over (from
 * scratch for the example). Opens no run directory and writes nothing.
 */

import { loadConfig } from "../src/config/load_config.ts";
import type { StageConfig } from "../src/config/run_config.ts";
import type { GpuContext } from "../src/gpu/device.ts";
import type { PolicyModel } from "../src/model/policy.ts";
import { resolveAlgorithm, type ResolvedAlgorithm } from "../src/algorithm/resolve_algorithm.ts";
import { loadStagePolicy } from "../src/run/stage_policy.ts";

/** The built-in example's config file. */
export const EXAMPLE_CONFIG: string =
  new URL("../examples/addition/config.yaml", import.meta.url).pathname;

/** Its RL stage: GRPO, 32 prompts x 8 rollouts, exact-match reward. */
export const EXAMPLE_RL_STAGE = "grpo";

/** A resolved stage and its algorithm. */
export interface BenchStage {
  stage: StageConfig;
  algorithm: ResolvedAlgorithm;
}

/**
 * Stage `stageName` of config `file` with `--set` style `overrides`; throws listing the stage
 * names when there is no such stage.
 */
export async function loadBenchStage(
  file: string,
  stageName: string,
  overrides: readonly string[] = [],
): Promise<BenchStage> {
  const config = await loadConfig(file, { overrides });
  const stage = config.stages.find((s) => s.stageName === stageName);
  if (!stage) {
    throw new Error(
      `Cannot pick stage "${stageName}" of ${file}: expected one of ${
        config.stages.map((s) => s.stageName).join(", ")
      }`,
    );
  }
  return { stage, algorithm: resolveAlgorithm(stage.algorithm) };
}

/** The initial policy of `stage` (its model path, or from scratch), never a checkpoint. */
export async function initialPolicy(stage: StageConfig, gpu: GpuContext): Promise<PolicyModel> {
  // With resume false the stage directory is never read.
  const { model } = await loadStagePolicy(stage, "", gpu, { resume: false });
  return model;
}
