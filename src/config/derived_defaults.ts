/**
 * The loader's one pass over the defaults computed from other keys, as docs/config.md states
 * them (the schema's `derived` words): every key the schema marks `derived` is filled here, and
 * the optional keys whose default depends on others (`algorithm.advantage_fn`, the experience
 * buffer's capacity, an SFT dataset's `messages_key`) when that default exists. Nothing else in
 * rft defaults a config key. Pure: the environment and working directory come as arguments.
 */

import { basename, extname, resolve } from "node:path";
import { ALGORITHM_TYPE } from "../algorithm/algorithm_type.ts";
import type { StageConfig, StageInput } from "./run_config.ts";

/** What the derived defaults read besides the stage. */
export interface DerivedContext {
  /** The working directory (`checkpoint_root_dir` defaults to its `runs/`). */
  cwd: string;
  /** Reads an environment variable (`RFT_NATS_URL`). */
  env: (name: string) => string | undefined;
}

/** Experience-buffer steps held in mode both: `capacity` defaults to this many steps. */
export const BUFFER_STEPS = 4;

/** `stage` with every derived default filled (see the file comment). */
export function withDerivedDefaults(stage: StageInput, ctx: DerivedContext): StageConfig {
  const algorithm = derivedAlgorithm(stage.algorithm);
  const buffer = derivedBuffer(stage, algorithm.repeatTimes);
  const natsUrl = ctx.env("RFT_NATS_URL") || undefined;
  return {
    ...stage,
    checkpointRootDir: stage.checkpointRootDir ?? resolve(ctx.cwd, "runs"),
    algorithm,
    buffer,
    explorer: {
      ...stage.explorer,
      evalOnStartup: stage.explorer.evalOnStartup ?? buffer.explorerInput.evalTasksets.length > 0,
    },
    cluster: {
      ...stage.cluster,
      backend: natsUrl ? "nats" : stage.cluster.backend,
      url: stage.cluster.url ?? natsUrl ?? "nats://127.0.0.1:4222",
    },
    trainer: { ...stage.trainer, criticLr: stage.trainer.criticLr ?? algorithm.optimizer.lr },
  };
}

/** `algorithm`: each component the section leaves out is the algorithm type's. */
function derivedAlgorithm(section: StageInput["algorithm"]): StageConfig["algorithm"] {
  const d = ALGORITHM_TYPE.get(section.algorithmType).defaultConfig;
  return withoutUndefined({
    ...section,
    repeatTimes: section.repeatTimes ?? d.repeatTimes,
    sampleStrategy: section.sampleStrategy ?? d.sampleStrategy,
    advantageFn: section.advantageFn ?? d.advantageFn ?? undefined,
    advantageFnArgs: { ...d.advantageFnArgs, ...section.advantageFnArgs },
    policyLossFn: section.policyLossFn ?? d.policyLossFn,
    policyLossFnArgs: { ...d.policyLossFnArgs, ...section.policyLossFnArgs },
    klPenaltyFn: section.klPenaltyFn ?? d.klPenaltyFn,
    klLossFn: section.klLossFn ?? d.klLossFn,
    entropyLossFn: section.entropyLossFn ?? d.entropyLossFn,
    dynamicSampling: {
      ...section.dynamicSampling,
      enable: section.dynamicSampling.enable ?? d.dynamicSampling ?? false,
    },
  });
}

/** `buffer`: batch sizes, tasksets, the experience buffer and the SFT dataset's format. */
function derivedBuffer(stage: StageInput, repeatTimes: number): StageConfig["buffer"] {
  const { buffer } = stage;
  const input = buffer.explorerInput;
  const taskset = (t: TasksetInput, isEval: boolean) => {
    // rollout_args.n wins over repeat_times; an eval taskset samples once unless told.
    const repeats = t.rolloutArgs.n ?? t.repeatTimes ?? (isEval ? 1 : repeatTimes);
    return withoutUndefined({
      ...t,
      name: t.name ?? basename(t.path, extname(t.path)),
      seed: t.seed ?? stage.seed,
      repeatTimes: repeats,
      rolloutArgs: { ...t.rolloutArgs, n: repeats },
      defaultWorkflowType: t.defaultWorkflowType ?? input.defaultWorkflowType,
      defaultRewardFnType: t.defaultRewardFnType ?? input.defaultRewardFnType,
    });
  };
  const stepSize = buffer.batchSize * repeatTimes;
  const { taskset: single, ...explorerInput } = input;
  const { sftWarmupDataset: dataset, experienceBuffer, ...trainerInput } = buffer.trainerInput;
  return {
    ...buffer,
    trainBatchSize: buffer.trainBatchSize ?? stepSize,
    explorerInput: {
      ...explorerInput,
      ...(single && { taskset: taskset(single, false) }),
      tasksets: input.tasksets.map((t) => taskset(t, false)),
      evalTasksets: input.evalTasksets.map((t) => taskset(t, true)),
    },
    trainerInput: {
      ...trainerInput,
      experienceBuffer: withoutUndefined({
        ...experienceBuffer,
        // Modes explore and train keep every experience: no trainer draws while they write.
        capacity: experienceBuffer.capacity ??
          (stage.mode === "both" ? BUFFER_STEPS * stepSize : undefined),
      }),
      ...(dataset && {
        sftWarmupDataset: { ...dataset, format: derivedDatasetFormat(dataset.format) },
      }),
    },
  };
}

/** A taskset section as validated. */
type TasksetInput = StageInput["buffer"]["explorerInput"]["tasksets"][number];

/** An SFT dataset's rows are chats when a messages key is set; a chat's key is "message". */
function derivedDatasetFormat(
  format: NonNullable<StageInput["buffer"]["trainerInput"]["sftWarmupDataset"]>["format"],
): NonNullable<StageConfig["buffer"]["trainerInput"]["sftWarmupDataset"]>["format"] {
  const promptType = format.promptType ??
    (format.messagesKey ? "messages" : "plaintext");
  return withoutUndefined({
    ...format,
    promptType,
    messagesKey: promptType === "messages" ? format.messagesKey ?? "message" : format.messagesKey,
  });
}

/** `object` without its keys whose value is undefined (a derived default that does not apply). */
function withoutUndefined<T extends object>(object: T): T {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined)) as T;
}
