/**
 * Training batches read from a stage's SFT / preference dataset
 * (`buffer.trainer_input.sft_warmup_dataset`) through a shuffled, resumable taskset: what mode
 * `train` trains sft and dpo on, and what fills `mix`'s expert buffer. Chat rows
 * (`prompt_type: messages`) need no response key; every row is converted once at load.
 */

import type { BatchSource } from "./batch_source.ts";
import type { Experience } from "./experience.ts";
import { dpoExperiences, sftExperience } from "./sft_data.ts";
import { logSkipped } from "./skipped_rows.ts";
import type { Task, TaskFormat } from "./task.ts";
import { Taskset, type TasksetState } from "./taskset.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import { InputError } from "../util/input_error.ts";

/** A demonstration or preference dataset (`buffer.trainer_input.sft_warmup_dataset`). */
export interface DatasetSpec {
  path: string;
  split: string;
  subsetName?: string;
  format: {
    /** "messages": rows hold a chat (under `messagesKey`); "plaintext": a prompt and response. */
    promptType: "messages" | "plaintext";
    promptKey: string;
    responseKey: string;
    /** Row key of the tools a chat row's template is rendered with. */
    toolsKey: string;
    systemPrompt?: string;
    messagesKey?: string;
    /** Preference pairs: keys of the chosen and rejected responses. */
    chosenKey?: string;
    rejectedKey?: string;
  };
}

/** Options of {@link datasetSource}. */
export interface DatasetSourceOptions {
  /** The algorithm trained on it: `dpo` reads preference pairs, any other demonstrations. */
  algorithm: string;
  tokenizer: Tokenizer;
  /** Longest sequence kept (prompt and response); longer rows are skipped. */
  maxTokens: number;
  totalEpochs: number;
  /** Seed of the shuffle. */
  seed: number;
  log: (line: string) => void;
}

/**
 * Batches of `size` rows: demonstrations (sft), or preference pairs (dpo: `size` rows give
 * `2 * size` experiences, chosen then rejected), drawn as a shuffled taskset over `totalEpochs`.
 */
export async function datasetSource(
  dataset: DatasetSpec,
  { algorithm: what, tokenizer, maxTokens, totalEpochs, seed, log }: DatasetSourceOptions,
): Promise<BatchSource & { restore(c: unknown): void }> {
  const { chosenKey, rejectedKey, promptType, toolsKey, ...keys } = dataset.format;
  const dpo = what === "dpo";
  if (dpo && (chosenKey === undefined || rejectedKey === undefined)) {
    throw new InputError(
      "trains dpo: buffer.trainer_input.sft_warmup_dataset.format needs chosen_key and rejected_key",
    );
  }
  const format: Partial<TaskFormat> = promptType === "messages"
    // A chat row holds its response as the last turn: no response key.
    ? { ...keys, responseKey: undefined }
    // Preference rows have no single response.
    : { ...keys, messagesKey: undefined, responseKey: dpo ? undefined : keys.responseKey };
  const experiencesOf = (task: Task) =>
    dpo
      ? dpoExperiences(task, tokenizer, maxTokens, {
        chosenKey: chosenKey!,
        rejectedKey: rejectedKey!,
      })
      : sftExperience(task, tokenizer, maxTokens, toolsKey);
  const taskset = await Taskset.open({
    path: dataset.path,
    split: dataset.split,
    subsetName: dataset.subsetName,
    format,
    selector: "shuffle",
    totalEpochs,
    seed,
    defaultWorkflowType: what,
    // Each row is turned into experiences once at load, so a bad row is reported once, by its
    // file line, and never drawn.
    rowCheck: (row, rowFormat) => {
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
