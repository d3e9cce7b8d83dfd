/**
 * Where a stage's policy comes from: the stage's own latest checkpoint when it resumes, else
 * the previous stage's final checkpoint, else `model.model_path` (loaded, or initialised from
 * its config.json with the run's seed and its `initializer_range` when `from_scratch`). Also
 * copies of a model on the GPU for the explorer and the frozen reference, and the rollout model
 * over a policy with the stage's limits.
 */

import type { StageConfig } from "../config/run_config.ts";
import type { GpuContext } from "../gpu/device.ts";
import { parseHfConfig } from "../model/hf_config.ts";
import { INIT_STD, initParameters } from "../model/init.ts";
import { createModel, loadModel, type PolicyModel } from "../model/policy.ts";
import { loadTokenizer } from "../model/tokenizer.ts";
import { PolicyRolloutModel } from "../workflow/policy_rollout_model.ts";
import type { AdamWState } from "../trainer/adamw.ts";
import { findLatestCheckpoint, loadCheckpoint, type TrainerState } from "../trainer/checkpoint.ts";

/** The policy a stage starts from. */
export interface StagePolicy {
  model: PolicyModel;
  /** Set when resuming from the stage's own checkpoint. */
  resumed?: { dir: string; optimizerState: AdamWState; trainerState: TrainerState };
  /** What it was loaded from, for the log. */
  source: string;
}

/**
 * The policy of `stage` (see the file comment); `resume: false` skips the stage's own
 * checkpoints (the stage's initial weights, e.g. for the reference model).
 */
export async function loadStagePolicy(
  stage: StageConfig,
  stageDir: string,
  gpu: GpuContext,
  { previousCheckpoint, resume }: { previousCheckpoint?: string; resume: boolean },
): Promise<StagePolicy> {
  const latest = resume && stage.continueFromCheckpoint
    ? await findLatestCheckpoint(stageDir)
    : undefined;
  if (latest) {
    const { model, optimizerState, trainerState } = await loadCheckpoint(latest, { gpu });
    return { model, resumed: { dir: latest, optimizerState, trainerState }, source: latest };
  }
  if (previousCheckpoint) {
    return { model: await loadModel(previousCheckpoint, { gpu }), source: previousCheckpoint };
  }
  const dir = stage.model.modelPath;
  if (!stage.model.fromScratch) return { model: await loadModel(dir, { gpu }), source: dir };
  const configPath = `${dir}/config.json`;
  const raw = JSON.parse(await Deno.readTextFile(configPath));
  // HF's `initializer_range` is the std of the normal init (INIT_STD when absent).
  const std = typeof raw.initializer_range === "number" ? raw.initializer_range : INIT_STD;
  const params = initParameters(parseHfConfig(raw, configPath), stage.seed, std);
  const model = await createModel(raw, params, { gpu, tokenizer: await loadTokenizer(dir) });
  return { model, source: `${dir} (from scratch, seed ${stage.seed})` };
}

/** A second model with `model`'s architecture and current weights (one readback). */
export async function cloneModel(model: PolicyModel): Promise<PolicyModel> {
  return await createModel(model.rawConfig, await model.gpuLock.run(() => model.readParameters()), {
    gpu: model.gpu,
    tokenizer: model.tokenizer,
  });
}

/** The rollout model of `model` with the stage's limits and sampling defaults. */
export function rolloutModel(
  stage: StageConfig,
  model: PolicyModel,
  seed: number,
): PolicyRolloutModel {
  const { maxPromptTokens, maxResponseTokens, temperature, topP, topK } = stage.model;
  return new PolicyRolloutModel(model, {
    maxPromptTokens,
    maxResponseTokens,
    defaults: { temperature, topP, topK },
    seed,
  });
}
