/**
 * Training batches read from a stage's SFT / preference dataset
 * (`buffer.trainer_input.sft_warmup_dataset`) through a shuffled, resumable taskset: what mode
 * `train` trains sft and dpo on, and what fills `mix`'s expert buffer.
 */

import type { Experience } from "../buffer/experience.ts";
import type { Task } from "../buffer/task.ts";
import { Taskset, type TasksetState } from "../buffer/taskset.ts";
import type { StageConfig } from "../config/run_config.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
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
    throw new Error(
      `Stage "${stage.stageName}" trains ${what} but has no buffer.trainer_input.sft_warmup_dataset`,
    );
  }
  const { chosenKey, rejectedKey, ...format } = section.format;
  const dpo = what === "dpo";
  if (dpo && (chosenKey === undefined || rejectedKey === undefined)) {
    throw new Error(
      `Stage "${stage.stageName}" trains dpo: buffer.trainer_input.sft_warmup_dataset.format needs chosen_key and rejected_key`,
    );
  }
  const taskset = await Taskset.open({
    path: section.path,
    split: section.split,
    // Preference rows have no single response.
    format: dpo ? { ...format, responseKey: undefined } : format,
    selector: "shuffle",
    totalEpochs,
    seed: stage.seed,
    defaultWorkflowType: what,
  });
  logSkipped(taskset, log);
  const experiencesOf = (task: Task) =>
    dpo
      ? dpoExperiences(task, tokenizer, maxTokens, {
        chosenKey: chosenKey!,
        rejectedKey: rejectedKey!,
      })
      : sftExperience(task, tokenizer, maxTokens);
  return {
    next(size) {
      const tasks = taskset.nextBatch(size);
      if (!tasks) return Promise.resolve(null);
      const batch: Experience[] = [];
      let skipped = 0;
      for (const task of tasks) {
        const exps = experiencesOf(task);
        if ("skipped" in exps) {
          skipped++;
          log(`skipped row ${task.index} of ${section.path}: ${exps.skipped}`);
        } else batch.push(...[exps].flat());
      }
      return Promise.resolve({ batch, skipped });
    },
    cursor: () => taskset.state(),
    restore: (c) => taskset.restore(c as TasksetState),
    close: () => Promise.resolve(),
  };
}
