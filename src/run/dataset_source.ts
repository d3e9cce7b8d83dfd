/**
 * Training batches read from a stage's SFT / preference dataset
 * (`buffer.trainer_input.sft_warmup_dataset`) through a shuffled, resumable taskset: what mode
 * `train` trains sft and dpo on, and what fills `mix`'s expert buffer. Chat rows
 * (`prompt_type: messages`) need no response key; every row is converted once at load.
 */

import type { Experience } from "../buffer/experience.ts";
import type { Task, TaskFormat } from "../buffer/task.ts";
import { Taskset, type TasksetState } from "../buffer/taskset.ts";
import type { StageConfig } from "../config/run_config.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import { InputError } from "../util/input_error.ts";
import type { BatchSource } from "../trainer/batch_source.ts";
import { dpoExperiences, sftExperience } from "./sft_data.ts";
import { logSkipped } from "./stage_tasksets.ts";

/**
 * Batches of demonstrations (sft) or preference pairs (dpo: `size` rows give `2 * size`
 * experiences, chosen then rejected), drawn as a shuffled taskset over `totalEpochs`.
 */
export async function datasetSource(
  stage: StageConfig,
  tokenizer: Tokenizer,
  maxTokens: number,
  log: (line: string) => void,
  { totalEpochs }: { totalEpochs: number },
): Promise<BatchSource & { restore(c: unknown): void }> {
  const section = stage.buffer.trainerInput.sftWarmupDataset;
  const what = stage.algorithm.algorithmType;
  if (!section) {
    throw new InputError(
      `Stage "${stage.stageName}" trains ${what} but has no buffer.trainer_input.sft_warmup_dataset`,
    );
  }
  const { chosenKey, rejectedKey, promptType, toolsKey, ...keys } = section.format;
  const dpo = what === "dpo";
  if (dpo && (chosenKey === undefined || rejectedKey === undefined)) {
    throw new InputError(
      `Stage "${stage.stageName}" trains dpo: buffer.trainer_input.sft_warmup_dataset.format needs chosen_key and rejected_key`,
    );
  }
  const chat = promptType === "messages" || (promptType === undefined && !!keys.messagesKey);
  const format: Partial<TaskFormat> = chat
    // A chat row holds its response as the last turn: no response key (Trinity's default key).
    ? { ...keys, messagesKey: keys.messagesKey ?? "message", responseKey: undefined }
    // Preference rows have no single response.
    : { ...keys, messagesKey: undefined, responseKey: dpo ? undefined : keys.responseKey };
  const experiencesOf = (task: Task) =>
    dpo
      ? dpoExperiences(task, tokenizer, maxTokens, {
        chosenKey: chosenKey!,
        rejectedKey: rejectedKey!,
      })
      : sftExperience(task, tokenizer, maxTokens);
  const taskset = await Taskset.open({
    path: section.path,
    split: section.split,
    subsetName: section.subsetName,
    format,
    selector: "shuffle",
    totalEpochs,
    seed: stage.seed,
    defaultWorkflowType: what,
    // Each row is turned into experiences once at load, so a bad row is reported once, by its
    // file line, and never drawn.
    rowCheck: (row, rowFormat) => {
      const tools = row[toolsKey];
      if (Array.isArray(tools) ? tools.length > 0 : tools !== undefined && tools !== null) {
        return `it has "${toolsKey}" (tools_key); rft renders its chat template without tools`;
      }
      const exps = experiencesOf(loadTask(row, rowFormat, what));
      return "skipped" in exps ? exps.skipped : undefined;
    },
  });
  logSkipped(taskset, log);
  // Rows skipped at load count once, with the first batch.
  let skippedAtLoad = taskset.skippedRows.length;
  return {
    next(size) {
      const tasks = taskset.nextBatch(size);
      if (!tasks) return Promise.resolve(null);
      const batch: Experience[] = [];
      let skipped = skippedAtLoad;
      skippedAtLoad = 0;
      for (const task of tasks) {
        const exps = experiencesOf(task);
        if ("skipped" in exps) {
          skipped++;
          log(`skipped ${taskset.rowOrigins[task.index]}: ${exps.skipped}`);
        } else batch.push(...[exps].flat());
      }
      return Promise.resolve({ batch, skipped });
    },
    cursor: () => taskset.state(),
    restore: (c) => taskset.restore(c as TasksetState),
    close: () => Promise.resolve(),
  };
}

/** A row as the task its load check converts. */
function loadTask(
  row: Readonly<Record<string, unknown>>,
  format: TaskFormat,
  workflow: string,
): Task {
  return {
    taskId: "load",
    index: 0,
    epoch: 0,
    workflow,
    rawTask: row,
    formatArgs: format,
    rolloutArgs: { n: 1 },
    workflowArgs: {},
    isEval: false,
  };
}
