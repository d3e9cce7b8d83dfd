/**
 * Checks every stage of a run before any GPU work, so a mistake in a late stage is found in
 * seconds, not after the stages before it have trained: each stage's algorithm resolves (its
 * components and their args), its workflows and reward fns are registered, and its inputs open
 * with the loaders the stage will use: the model's config.json, weight files and tokenizer, then
 * the tasksets and eval tasksets it reads (each prompt encoded by that tokenizer, and the first
 * task's prompt as its workflow builds it: system prompt and chat template), its SFT or
 * preference dataset. A problem is one ConfigError naming the config file, the stage and the
 * key; unusable taskset rows are logged by file line. Allocates nothing on the GPU.
 */

import { Taskset } from "../buffer/taskset.ts";
import { ConfigError } from "../config/config_error.ts";
import { exploredTasksets, type RunConfig, type StageConfig } from "../config/run_config.ts";
import { readHfConfig } from "../model/hf_config.ts";
import { loraTargets } from "../model/lora.ts";
import { openCheckpoint } from "../model/safetensors.ts";
import { loadTokenizer, type Tokenizer } from "../model/tokenizer.ts";
import { REWARD_FUNCTIONS, WORKFLOWS } from "../workflow/mod.ts";
import { datasetSource } from "../buffer/dataset_source.ts";
import { logSkipped } from "../buffer/skipped_rows.ts";
import { stageDataset, tasksetConfig } from "./stage_tasksets.ts";
import { ALGORITHM_TYPE } from "../algorithm/algorithm_type.ts";
import { hasExperienceParts } from "../buffer/experience_io.ts";

/**
 * Checks every stage of `config` (see the file comment); throws the first problem found. Rows
 * of a taskset that cannot be used (their prompt included: the stage's tokenizer must encode
 * it) are logged with their file line through `log`.
 */
export async function checkStages(
  config: RunConfig,
  log: (line: string) => void = (line) => console.error(line),
): Promise<void> {
  const staged = config.stages.length > 1 || config.stages[0].stageName !== "main";
  for (const [i, stage] of config.stages.entries()) {
    const check = async (key: string, fn: () => unknown) => {
      try {
        await fn();
      } catch (err) {
        if (err instanceof ConfigError) throw err;
        const at = staged ? `stages[${i}].${key}` : key;
        throw new ConfigError(
          config.file,
          at,
          `${(err as Error).message} (stage "${stage.stageName}")`,
        );
      }
    };
    const dir = stage.model.modelPath;
    let tokenizer: Tokenizer | undefined;
    let maxPositions = 0;
    await check("model.model_path", async () => {
      maxPositions = (await readHfConfig(dir)).maxPositions;
      if (!stage.model.fromScratch) await openCheckpoint(dir);
      tokenizer = await loadTokenizer(dir);
    });
    for (const lora of stage.model.loraConfigs) {
      await check(
        "model.lora_configs[0].target_modules",
        async () => loraTargets(await readHfConfig(dir), lora.targetModules),
      );
    }
    const input = stage.buffer.explorerInput;
    const explores = stage.mode === "both" || stage.mode === "explore";
    const sections = [
      ...(explores
        ? exploredTasksets(input).map((section, k) => ({
          key: input.taskset
            ? "buffer.explorer_input.taskset"
            : `buffer.explorer_input.tasksets[${k}]`,
          section,
          isEval: false,
        }))
        : []),
      ...input.evalTasksets.map((section, k) => ({
        key: `buffer.explorer_input.eval_tasksets[${k}]`,
        section,
        isEval: true,
      })),
    ];
    for (const { key, section, isEval } of sections) {
      await check(key, async () => {
        checkComponents(section.defaultWorkflowType, section.defaultRewardFnType);
        const taskset = await Taskset.open(tasksetConfig(stage, section, isEval, tokenizer));
        logSkipped(taskset, log);
        if (tokenizer) checkTasksetPrompt(taskset, tokenizer);
      });
    }
    if (usesDataset(stage) && tokenizer) {
      await check("buffer.trainer_input.sft_warmup_dataset", async () => {
        const model = { tokenizer, config: { maxPositions } };
        const source = await datasetSource(...stageDataset(stage, model, () => {}, 1));
        await source.close();
      });
    }
  }
}

/**
 * Checks, once the run directory is known and before any GPU work, that each unfinished stage
 * of mode train learning from experiences on disk (no cluster backend) has some: the default `buffer.trainer_input.
 * experience_buffer.path` is the stage directory's `experiences/`, which only a mode explore run
 * of the same stage writes; a given directory must hold parts unless an earlier stage of this
 * run explores (and may be writing it).
 */
export async function checkStoredExperiences(
  config: RunConfig,
  stageDir: (stage: StageConfig) => string,
  finished: readonly unknown[],
): Promise<void> {
  const staged = config.stages.length > 1 || config.stages[0].stageName !== "main";
  for (const [i, stage] of config.stages.entries()) {
    const type = ALGORITHM_TYPE.get(stage.algorithm.algorithmType);
    if (finished[i] || stage.mode !== "train" || type.schema !== "experience") continue;
    if (stage.cluster.backend !== "none") continue; // experiences come from the cluster's queue
    const given = stage.buffer.trainerInput.experienceBuffer.path;
    const earlierExplores = config.stages.slice(0, i).some((s) =>
      s.mode === "both" || s.mode === "explore"
    );
    if (given !== undefined && (earlierExplores || !(await Deno.stat(given)).isDirectory)) {
      continue;
    }
    const dir = given ?? `${stageDir(stage)}/experiences`;
    if (await hasExperienceParts(dir)) continue;
    const key = "buffer.trainer_input.experience_buffer.path";
    throw new ConfigError(
      config.file,
      staged ? `stages[${i}].${key}` : key,
      `expected experiences to train on (mode train with algorithm_type "${stage.algorithm.algorithmType}" reads the part-*.parquet files a mode explore run writes), found none in ${dir}${
        given === undefined ? " (the default: set the path to an explore run's experiences/)" : ""
      }`,
    );
  }
}

/** Whether `stage` reads `buffer.trainer_input.sft_warmup_dataset`. */
function usesDataset(stage: StageConfig): boolean {
  const type = stage.algorithm.algorithmType;
  const trains = stage.mode === "both" || stage.mode === "train";
  return trains && (type === "sft" || type === "dpo" || type === "mix");
}

/** Throws when a taskset names an unknown workflow or reward fn. */
function checkComponents(workflow: string | undefined, reward: string | undefined): void {
  if (workflow !== undefined) WORKFLOWS.get(workflow);
  if (reward !== undefined) REWARD_FUNCTIONS.get(reward);
}

/**
 * Throws when the prompt of `taskset`'s first task, as its workflow builds it (a default system
 * prompt, the chat template), cannot be encoded by `tokenizer`; workflows whose prompts come
 * from sampling or services are left to the run.
 */
function checkTasksetPrompt(taskset: Taskset, tokenizer: Tokenizer): void {
  const [task] = taskset.nextBatch(1) ?? [];
  const prompt = task && WORKFLOWS.get(task.workflow).firstPrompt?.(task);
  if (prompt === undefined) return;
  try {
    tokenizer.encode(
      typeof prompt === "string"
        ? prompt
        : tokenizer.applyChatTemplate(prompt, { addGenerationPrompt: true }),
    );
  } catch (err) {
    throw new Error(
      `the first task's prompt as workflow "${task.workflow}" builds it: ${(err as Error).message}`,
    );
  }
}
