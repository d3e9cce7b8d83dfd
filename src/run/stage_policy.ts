/**
 * Where a stage's policy comes from: the stage's own latest checkpoint when it resumes, else
 * the previous stage's final checkpoint, else `model.model_path` (loaded, or initialised from
 * its config.json with the run's seed and its `initializer_range` when `from_scratch`). Also
 * copies of a model on the GPU for the explorer and the frozen reference, and the rollout model
 * over a policy with the stage's limits.
 */

import type { LoraConfigSection, StageConfig } from "../config/run_config.ts";
import type { GpuContext } from "../gpu/device.ts";
import { parseHfConfig } from "../model/hf_config.ts";
import { INIT_STD, initParameters } from "../model/init.ts";
import { createModel, loadModel, type PolicyModel } from "../model/policy.ts";
import { copyModel, type WeightDtype } from "../model/weight_transfer.ts";
import { loadTokenizer } from "../model/tokenizer.ts";
import {
  createLoraAdapter,
  initLoraParameters,
  loadLoraAdapter,
  type LoraAdapter,
  loraTargets,
} from "../model/lora.ts";
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
 * checkpoints (the stage's initial weights, e.g. for the reference model). The policy to train
 * (`resume: true`) of a stage with `model.lora_configs` gets its adapter: the checkpoint's when
 * resuming, else the one at `path`, else a fresh one seeded by the stage's seed; `adapter: true`
 * attaches the latter to the initial weights too (a cluster explorer, whose adapter values come
 * with each weight sync); any other load merges an adapter it finds into the weights. Weights
 * nothing writes (`frozen`: a reference or a model only explored with; by default a LoRA
 * stage's base) keep a checkpoint's BF16 / F16 matrices in that format.
 */
export async function loadStagePolicy(
  stage: StageConfig,
  stageDir: string,
  gpu: GpuContext,
  options: { previousCheckpoint?: string; resume: boolean; adapter?: boolean; frozen?: boolean },
): Promise<StagePolicy> {
  const frozen = options.frozen ?? stage.model.loraConfigs.length > 0;
  const policy = await loadWeights(stage, stageDir, gpu, { ...options, frozen });
  const lora = stage.model.loraConfigs[0];
  if ((options.adapter ?? options.resume) && lora && !policy.model.lora) {
    try {
      policy.model.attachLora(await stageAdapter(lora, policy.model, stage.seed));
    } catch (err) {
      policy.model.destroy();
      throw err;
    }
  }
  return policy;
}

/** The adapter `lora` asks for over `model`: loaded from its path, else fresh (seeded). */
async function stageAdapter(
  lora: LoraConfigSection,
  model: PolicyModel,
  seed: number,
): Promise<LoraAdapter> {
  if (lora.path !== undefined) return await loadLoraAdapter(model.gpu, model.config, lora.path);
  const settings = {
    rank: lora.loraRank,
    alpha: lora.loraAlpha,
    targetModules: lora.targetModules,
  };
  const targets = loraTargets(model.config, settings.targetModules);
  const values = initLoraParameters(targets, settings.rank, seed);
  return await createLoraAdapter(model.gpu, model.config, settings, values);
}

/** The weights of {@link loadStagePolicy}, adapters of checkpoints it resumes attached. */
async function loadWeights(
  stage: StageConfig,
  stageDir: string,
  gpu: GpuContext,
  { previousCheckpoint, resume, frozen }: {
    previousCheckpoint?: string;
    resume: boolean;
    frozen: boolean;
  },
): Promise<StagePolicy> {
  const latest = resume && stage.continueFromCheckpoint
    ? await findLatestCheckpoint(stageDir)
    : undefined;
  if (latest) {
    const { model, optimizerState, trainerState } = await loadCheckpoint(latest, { gpu });
    return { model, resumed: { dir: latest, optimizerState, trainerState }, source: latest };
  }
  if (previousCheckpoint) {
    const model = await loadModel(previousCheckpoint, { gpu, frozen });
    return { model, source: previousCheckpoint };
  }
  const dir = stage.model.modelPath;
  if (!stage.model.fromScratch) {
    return { model: await loadModel(dir, { gpu, frozen }), source: dir };
  }
  const configPath = `${dir}/config.json`;
  const raw = JSON.parse(await Deno.readTextFile(configPath));
  // HF's `initializer_range` is the std of the normal init (INIT_STD when absent).
  const std = typeof raw.initializer_range === "number" ? raw.initializer_range : INIT_STD;
  const params = initParameters(parseHfConfig(raw, configPath), stage.seed, std);
  const model = await createModel(raw, params, {
    gpu,
    tokenizer: await loadTokenizer(dir),
    sideFilesFrom: dir, // its tokenizer files go into every checkpoint
  });
  return { model, source: `${dir} (from scratch, seed ${stage.seed})` };
}

/**
 * A second model with `model`'s architecture and current weights, copied on the GPU with its
 * matrices in `dtype` (the rollout model's `dtype`: bf16 halves the explorer's bytes, as vLLM
 * serves a policy in bfloat16), for the explorer. With a LoRA adapter attached, the clone is the model's frozen base, shared
 * (`baseModel`), with a copy of the adapter of its own, as vLLM serves a LoRA policy: the explorer
 * costs the adapter's bytes, not another copy of the weights, and a sync copies only the adapter.
 */
export async function cloneModel(
  model: PolicyModel,
  dtype: WeightDtype = "f32",
): Promise<PolicyModel> {
  return await model.gpuLock.run(async () => {
    if (model.lora) {
      const clone = model.baseModel();
      const values = await model.readLoraParameters();
      clone.attachLora(
        await createLoraAdapter(model.gpu, model.config, model.lora.settings, values),
      );
      return clone;
    }
    return await copyModel(model, dtype);
  });
}

/**
 * The dtype of the explorer's copy of `model`'s weights: the stage's
 * `explorer.rollout_model.dtype`, auto being the checkpoint's `torch_dtype` (half when it is
 * bfloat16 or float16, as vLLM serves it), else f32.
 */
export function rolloutDtype(stage: StageConfig, model: PolicyModel): WeightDtype {
  const asked = stage.explorer.rolloutModel.dtype;
  const name = asked === "auto" ? model.rawConfig.torch_dtype : asked;
  return name === "bfloat16" ? "bf16" : name === "float16" ? "f16" : "f32";
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
    templateVariables: stage.model.chatTemplateKwargs,
    minResponseTokens: stage.model.minResponseTokens,
  });
}
