/**
 * A stage's tasksets from its config sections: the `TasksetConfig` of a section (rollout args,
 * defaults of the explorer input), the eval tasksets opened (their skipped rows logged), and
 * the SFT / preference dataset's reading arguments. Runs no task.
 */

import type { DatasetSourceOptions, DatasetSpec } from "../buffer/dataset_source.ts";
import { promptEncodingProblem } from "../buffer/task.ts";
import { logSkipped } from "../buffer/skipped_rows.ts";
import { Taskset, type TasksetConfig } from "../buffer/taskset.ts";
import type { StageConfig, TasksetSection } from "../config/run_config.ts";
import type { EvalTaskset } from "../explorer/evaluator.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import { InputError } from "../util/input_error.ts";
import { WORKFLOWS } from "../workflow/mod.ts";

/**
 * A `TasksetConfig` for `section` of `stage`; with `tokenizer`, a row whose prompt it cannot
 * encode is skipped at load (listed by its file line).
 */
export function tasksetConfig(
  stage: StageConfig,
  section: TasksetSection,
  isEval: boolean,
  tokenizer?: Tokenizer,
): TasksetConfig {
  return {
    path: section.path,
    table: section.name,
    split: section.split,
    subsetName: section.subsetName,
    format: section.format,
    selector: section.selector,
    featureKeys: section.featureKeys,
    selectorArgs: section.selectorArgs,
    totalEpochs: isEval ? 1 : stage.buffer.totalEpochs,
    seed: section.seed,
    defaultWorkflowType: section.defaultWorkflowType,
    defaultRewardFnType: section.defaultRewardFnType,
    rolloutArgs: section.rolloutArgs,
    workflowArgs: section.workflowArgs,
    isEval,
    ...rowChecks(section.defaultWorkflowType, tokenizer),
  };
}

/**
 * How the rows of a taskset run by `workflow` are checked at load: by the workflow when it
 * reads rows of its own layout, else by the format (and, with `tokenizer`, its prompt encoded).
 */
function rowChecks(workflow: string, tokenizer: Tokenizer | undefined): Partial<TasksetConfig> {
  const own = WORKFLOWS.has(workflow) ? WORKFLOWS.get(workflow).rowProblem : undefined;
  if (own) return { formatCheck: false, rowCheck: (row) => own(row) };
  if (tokenizer === undefined) return {};
  return {
    rowCheck: (row, formatArgs) => promptEncodingProblem({ rawTask: row, formatArgs }, tokenizer),
  };
}

/** The eval tasksets of `stage`, opened; skipped rows are logged. */
export async function openEvalTasksets(
  stage: StageConfig,
  log: (line: string) => void,
  tokenizer?: Tokenizer,
): Promise<EvalTaskset[]> {
  return await Promise.all(stage.buffer.explorerInput.evalTasksets.map(async (section) => {
    const taskset = await Taskset.open(tasksetConfig(stage, section, true, tokenizer));
    logSkipped(taskset, log);
    const { name, repeatTimes, rewardFnArgs } = section;
    return { name, taskset, repeatTimes, rewardFnArgs };
  }));
}

/**
 * The SFT / preference dataset of `stage` (`buffer.trainer_input.sft_warmup_dataset`) and how
 * to read it with `model`'s tokenizer up to its longest sequence, over `totalEpochs`: the
 * arguments of `datasetSource`. Throws when the stage has no dataset.
 */
export function stageDataset(
  stage: StageConfig,
  model: { tokenizer?: Tokenizer; config: { maxPositions: number } },
  log: (line: string) => void,
  totalEpochs: number,
): [DatasetSpec, DatasetSourceOptions] {
  const dataset = stage.buffer.trainerInput.sftWarmupDataset;
  const algorithm = stage.algorithm.algorithmType;
  if (!dataset || !model.tokenizer) {
    throw new InputError(
      `Stage "${stage.stageName}" trains ${algorithm} but has no ${
        dataset ? "tokenizer" : "buffer.trainer_input.sft_warmup_dataset"
      }`,
    );
  }
  const maxTokens = model.config.maxPositions;
  return [dataset, {
    algorithm,
    tokenizer: model.tokenizer,
    maxTokens,
    totalEpochs,
    seed: stage.seed,
    log,
  }];
}
