/**
 * The resolved run configuration: what `./rft run config.yaml` runs, after YAML parsing,
 * `${ENV:default}` interpolation, `--set` overrides, defaults and validation (see
 * `load_config.ts`). YAML keys are Trinity-RFT's snake_case; here they are camelCase
 * (`buffer.explorer_input.taskset.default_workflow_type` -> `buffer.explorerInput.taskset.
 * defaultWorkflowType`). Component `*_args` mappings keep their YAML keys (they are passed to
 * registries as they are). Types only: no parsing here.
 */

import type { AuxiliaryModelSpec } from "../auxiliary/auxiliary_models.ts";
import type { SyncStyle } from "../sync/synchronizer.ts";
import type { Args } from "../util/registry.ts";

/** What a run does (`mode`). */
export type RunMode = "both" | "explore" | "train" | "bench";

/** How explorer and trainer hand over weights (`synchronizer.sync_style`). */
export type { SyncStyle } from "../sync/synchronizer.ts";

/** `model`: the policy and its sampling defaults. */
export interface ModelSection {
  /** A HF model directory (config.json, tokenizer, weights unless `fromScratch`). */
  modelPath: string;
  /**
   * Initialise the weights randomly (seeded by the run's `seed`) from `modelPath`'s config.json
   * instead of loading safetensors: the built-in from-scratch models ship only config and
   * tokenizer. Default false.
   */
  fromScratch: boolean;
  /** Prompts longer than this (in tokens) are cut from the left. Default 512. */
  maxPromptTokens: number;
  /** Most tokens generated per response (`max_tokens` of rollouts). Default 128. */
  maxResponseTokens: number;
  /** Sampling defaults of rollouts; a taskset's `rollout_args` override them. */
  temperature: number;
  topP: number;
  topK: number;
  /** LoRA adapters to train instead of all weights (Trinity's `lora_configs`; at most one). */
  loraConfigs: LoraConfigSection[];
}

/** One of `model.lora_configs`. */
export interface LoraConfigSection {
  /** Name in logs. Default "default". */
  name: string;
  /** A PEFT adapter directory to continue from; absent: a fresh adapter (A seeded, B zero). */
  path?: string;
  /** Rank r. Default 32. */
  loraRank: number;
  /** The update is (alpha / r) B A. Default 32. */
  loraAlpha: number;
  /** Always 0: rft has no dropout. */
  loraDropout: number;
  /** PEFT module names or [`all-linear`] (the default). */
  targetModules: string[];
}

/** `algorithm.optimizer`: AdamW and its learning-rate schedule. */
export interface OptimizerSection {
  lr: number;
  betas: [number, number];
  eps: number;
  weightDecay: number;
  /** Linear warmup steps from 0 to `lr`. Default 0. */
  lrWarmupSteps: number;
  /** "constant" (default), "cosine" or "linear" decay after warmup. */
  warmupStyle: "constant" | "cosine" | "linear";
  /** Final lr of the decays as a fraction of `lr`. Default 0. */
  minLrRatio: number;
  /** Global gradient-norm clip; 0 = none. Default 1. */
  gradClip: number;
}

/**
 * `algorithm`: the algorithm type and any component it overrides. A component left out
 * (undefined) takes the algorithm type's default (`ALGORITHM_TYPE`).
 */
export interface AlgorithmSection {
  /** Name in `ALGORITHM_TYPE`. Default "grpo". */
  algorithmType: string;
  /** Rollouts per task; default: the algorithm type's. */
  repeatTimes?: number;
  sampleStrategy?: string;
  sampleStrategyArgs: Args;
  advantageFn?: string;
  advantageFnArgs: Args;
  policyLossFn?: string;
  policyLossFnArgs: Args;
  klPenaltyFn?: string;
  klPenaltyFnArgs: Args;
  klLossFn?: string;
  klLossFnArgs: Args;
  entropyLossFn?: string;
  entropyLossFnArgs: Args;
  /** DAPO's dynamic sampling; `enable` undefined: the algorithm type's default. */
  dynamicSampling: { enable?: boolean; maxNumGenBatches: number };
  optimizer: OptimizerSection;
}

/** One taskset (`buffer.explorer_input.taskset` or an entry of `eval_tasksets`). */
export interface TasksetSection {
  /** Name used in logs and metric keys (`eval/<name>/accuracy`). Default: the file name. */
  name: string;
  /** A .jsonl / .parquet file or a HF-style dataset directory (resolved against the config). */
  path: string;
  split: string;
  /** Samples per task (Trinity's `repeat_times`); `rollout_args.n` wins when both are set. */
  repeatTimes?: number;
  /** Subset (config) folder of a Hub dataset directory (`main` of gsm8k). */
  subsetName?: string;
  /** A name in `TASK_SELECTORS`. */
  selector: string;
  /** Seed of the selector; default: the run's `seed`. */
  seed: number;
  /** Numeric row keys the selector reads and whose drawn values are logged. */
  featureKeys: string[];
  /** The selector's arguments over its defaults (Trinity's `data_selector.kwargs`). */
  selectorArgs: Args;
  /** Share of each batch while in the mix; default: the taskset's size. */
  weight?: number;
  /** Graduation and prerequisite among several tasksets. */
  lesson?: {
    window: number;
    graduatePassRate?: number;
    requires?: string;
    unlockPassRate: number;
  };
  format: {
    promptKey: string;
    responseKey?: string;
    systemPrompt?: string;
    messagesKey?: string;
  };
  /** Per-taskset sampling (`rollout_args`); `n` defaults to `algorithm.repeat_times`. */
  rolloutArgs: {
    n?: number;
    temperature?: number;
    topP?: number;
    topK?: number;
    maxTokens?: number;
  };
  workflowArgs: Record<string, unknown>;
  /** Workflow of the tasks; default: `explorer_input.default_workflow_type`. */
  defaultWorkflowType?: string;
  /** Reward fn of the tasks; default: `explorer_input.default_reward_fn_type`. */
  defaultRewardFnType?: string;
  /** Arguments of the tasks' reward fn (`reward_fn_args`), over its defaults. */
  rewardFnArgs: Record<string, unknown>;
}

/** `buffer.trainer_input.experience_buffer`: where experiences wait for the trainer. */
export interface ExperienceBufferSection {
  /** Most experiences held (back-pressure beyond). Default: 4 * batch_size * repeat_times. */
  capacity?: number;
  /** Drop experiences older than this many policy versions. Default: unlimited. */
  maxStaleness?: number;
  /** Replay (`linear_decay` priority); absent: each experience used once. */
  replay?: { decay: number; reuseCooldownMs: number; maxUseCount?: number };
  /**
   * An existing experience directory or JSONL file to train from (mode `train`); default: the
   * run directory's `experiences/`.
   */
  path?: string;
}

/** `buffer.trainer_input.sft_warmup_dataset` / expert data for `sft`, `dpo` and `mix`. */
export interface SftDatasetSection {
  path: string;
  split: string;
  subsetName?: string;
  format: {
    /** "messages" (rows hold a chat) or "plaintext"; default: see the schema. */
    promptType?: "messages" | "plaintext";
    promptKey: string;
    responseKey: string;
    /** Row key of tool schemas: rows with tools are skipped. Default "tools". */
    toolsKey: string;
    systemPrompt?: string;
    messagesKey?: string;
    /** DPO: keys of the chosen and rejected responses. */
    chosenKey?: string;
    rejectedKey?: string;
  };
}

/** `buffer`. */
export interface BufferSection {
  /** Tasks per explore step (each sampled `repeat_times` times). Default 8. */
  batchSize: number;
  /** Experiences per train step; default batch_size * repeat_times. */
  trainBatchSize?: number;
  totalEpochs: number;
  /** Stop after this many steps; default: when the taskset's epochs are used up. */
  totalSteps?: number;
  explorerInput: {
    /** The one taskset (or `tasksets`; see {@link exploredTasksets}). */
    taskset?: TasksetSection;
    /** Several tasksets mixed (the loader rejects a config setting both). */
    tasksets: TasksetSection[];
    evalTasksets: TasksetSection[];
    defaultWorkflowType: string;
    defaultRewardFnType?: string;
  };
  trainerInput: {
    experienceBuffer: ExperienceBufferSection;
    /** SFT / DPO data (modes and stages whose algorithm schema is "sft" or "dpo"), and `mix`. */
    sftWarmupDataset?: SftDatasetSection;
  };
}

/** One of `explorer.auxiliary_models`: exactly one of `modelPath`, `onnxPath`. */
export type AuxiliaryModelSection = AuxiliaryModelSpec;

/** `explorer`. */
export interface ExplorerSection {
  /** Workflow runners running concurrently. Default 4. */
  runnerNum: number;
  /** Seconds a workflow may run before it is abandoned. Default 900. */
  maxTimeout: number;
  /** Retries of a failed or timed-out workflow. Default 2. */
  maxRetryTimes: number;
  /** Evaluate every this many explore steps (and at the start and end); 0 = never. Default 0. */
  evalInterval: number;
  /** Evaluate before the first step. Default true when there are eval tasksets. */
  evalOnStartup: boolean;
  /** Models workflows and reward fns use but the run does not train. Default none. */
  auxiliaryModels: AuxiliaryModelSection[];
  rolloutModel: {
    /** Serve the policy over an OpenAI-compatible API. Default false. */
    enableOpenaiApi: boolean;
    /** Address the API listens on. Default 127.0.0.1. */
    openaiApiHost: string;
    /** Port of the API; 0 picks a free one. Default 0. */
    openaiApiPort: number;
    /** Key every API request must send as a Bearer token; default none. */
    openaiApiKey?: string;
    /** Read replies as tool calls for `tool_choice: "auto"`. Default true. */
    enableAutoToolChoice: boolean;
    /** Tool-call parser name; default: the format the chat template writes. */
    toolCallParser?: string;
  };
}

/** `synchronizer`. */
export interface SynchronizerSection {
  /** Train steps between weight syncs. Default 1. */
  syncInterval: number;
  /** Explore steps the explorer may run ahead of the trainer (one-step-off = 1). Default 0. */
  syncOffset: number;
  syncStyle: SyncStyle;
}

/** `cluster`: explorers and the trainer in separate processes (`src/cluster/`). */
export interface ClusterSection {
  /** `none`: one process; `nats`: over a NATS JetStream server. */
  backend: "none" | "nats";
  /** NATS server URL(s), comma-separated; default RFT_NATS_URL or nats://127.0.0.1:4222. */
  url?: string;
  /** Seconds before a task batch of a silent explorer is handed to another. Default 60. */
  ackWait: number;
  /** How synced weights travel; bf16 halves the bytes. Default f32. */
  weightDtype: "f32" | "bf16";
}

/** `trainer`. */
export interface TrainerSection {
  /** Save a checkpoint every this many train steps (and at the end); 0 = only at the end. */
  saveInterval: number;
  /** Complete checkpoints kept (oldest deleted). Default: all. */
  maxCheckpointsToKeep?: number;
  /** Token budget of a micro-batch (gradients accumulate over them); default: the whole batch. */
  maxTokensPerMicroBatch?: number;
  /** Pack several sequences per row when every loss term is token-mean. Default false. */
  packSequences: boolean;
  /** PPO epochs over each batch. Default 1. */
  ppoEpochs: number;
  /** Experiences per optimizer step within a batch; default: the whole batch. */
  ppoMiniBatchSize?: number;
  /** Peak learning rate of the critic (ppo); default the policy's. */
  criticLr?: number;
  /** Half-width of the critic's value clip around the rollout values. Default 0.5. */
  cliprangeValue: number;
}

/** `monitor`. */
export interface MonitorSection {
  /** Write TensorBoard event files under `<run>/tensorboard/`. Default true. */
  tensorboard: boolean;
  /** Console progress line. Default true. */
  console: boolean;
}

/** One experience operator (`data_processor.experience_pipeline.operators[]`). */
export interface OperatorSection {
  name: string;
  args: Args;
}

/** Everything of a run except `stages` (one stage after resolution). */
export interface StageConfig {
  /** The stage's name (`stages[i].stage_name`); "main" for a config without stages. */
  stageName: string;
  mode: RunMode;
  project: string;
  name: string;
  /** Root of run directories: the run lives in `<checkpointRootDir>/<project>/<name>/`. */
  checkpointRootDir: string;
  /** Plugin directories the config names (absolute); `rft run` loads them before the config. */
  pluginDirs: string[];
  /** Resume from the run directory when it holds state. Default true. */
  continueFromCheckpoint: boolean;
  /** Seed of data order, initialisation and sampling. Default 42. */
  seed: number;
  model: ModelSection;
  algorithm: AlgorithmSection;
  buffer: BufferSection;
  explorer: ExplorerSection;
  synchronizer: SynchronizerSection;
  cluster: ClusterSection;
  trainer: TrainerSection;
  monitor: MonitorSection;
  dataProcessor: { experiencePipeline: { operators: OperatorSection[] } };
}

/**
 * A resolved config: its stages in order, each complete (a stage's keys override the top-level
 * ones; later stages start from the previous stage's last checkpoint). A config without
 * `stages` has one stage named "main".
 */
export interface RunConfig {
  /** The config file read (absolute), for messages. */
  file: string;
  stages: StageConfig[];
  /** Trinity-RFT keys with no meaning in rft that the file sets, each once (one warning line). */
  ignoredTrinityKeys: string[];
  /** Other warnings of the loader (a Trinity value replaced by rft's), one line each. */
  notes: string[];
}

/** The tasksets the explorer draws from: `taskset` as a list of one, else `tasksets`. */
export function exploredTasksets(input: BufferSection["explorerInput"]): TasksetSection[] {
  return input.taskset ? [input.taskset] : input.tasksets;
}
