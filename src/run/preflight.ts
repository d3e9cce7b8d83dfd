/**
 * Checks every stage of a run before any GPU work, so a mistake in a late stage is found in
 * seconds, not after the stages before it have trained: each stage's algorithm resolves (its
 * components and their args), its workflows and reward fns are registered, and its inputs open
 * with the loaders the stage will use: the tasksets and eval tasksets it reads, its SFT or
 * preference dataset, the model's config.json, weight files and tokenizer. A problem is one
 * ConfigError naming the config file, the stage and the key. Allocates nothing on the GPU.
 */

import { Taskset } from "../buffer/taskset.ts";
import { ConfigError } from "../config/config_error.ts";
import type { RunConfig, StageConfig } from "../config/run_config.ts";
import { readHfConfig } from "../model/hf_config.ts";
import { openCheckpoint } from "../model/safetensors.ts";
import { loadTokenizer, type Tokenizer } from "../model/tokenizer.ts";
import { REWARD_FUNCTIONS, WORKFLOWS } from "../workflow/mod.ts";
import { resolveAlgorithm } from "./algorithm_setup.ts";
import { datasetSource } from "./dataset_source.ts";
import { tasksetConfig } from "./stage_tasksets.ts";

/** Checks every stage of `config` (see the file comment); throws the first problem found. */
export async function checkStages(config: RunConfig): Promise<void> {
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
    let repeatTimes = 1;
    await check("algorithm", () => repeatTimes = resolveAlgorithm(stage.algorithm).repeatTimes);
    const input = stage.buffer.explorerInput;
    const explores = stage.mode === "both" || stage.mode === "explore";
    if (input.taskset && explores) {
      const section = input.taskset;
      await check("buffer.explorer_input.taskset", async () => {
        checkComponents(section.defaultWorkflowType, section.defaultRewardFnType);
        await Taskset.open(tasksetConfig(stage, section, repeatTimes, false));
      });
    }
    for (const [k, section] of input.evalTasksets.entries()) {
      await check(`buffer.explorer_input.eval_tasksets[${k}]`, async () => {
        checkComponents(section.defaultWorkflowType, section.defaultRewardFnType);
        await Taskset.open(tasksetConfig(stage, section, 1, true));
      });
    }
    const dir = stage.model.modelPath;
    let tokenizer: Tokenizer | undefined;
    let maxPositions = 0;
    await check("model.model_path", async () => {
      maxPositions = (await readHfConfig(dir)).maxPositions;
      if (!stage.model.fromScratch) await openCheckpoint(dir);
      tokenizer = await loadTokenizer(dir);
    });
    if (usesDataset(stage) && tokenizer) {
      await check("buffer.trainer_input.sft_warmup_dataset", async () => {
        const source = await datasetSource(stage, tokenizer!, maxPositions, () => {}, {
          totalEpochs: 1,
        });
        await source.close();
      });
    }
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
