/**
 * A stage's checkpoints: saved with the buffer's consumption record (so a resume hands out again
 * exactly what the lost steps took), and the buffer rewound to a checkpoint's record before a
 * resumed stage opens it. The checkpoint format itself is `trainer/checkpoint.ts`.
 */

import { BUFFER_STATE_FILE } from "../buffer/experience_buffer.ts";
import type { StageConfig } from "../config/run_config.ts";
import { saveCheckpoint } from "../trainer/checkpoint.ts";
import type { CriticStep } from "../trainer/critic.ts";
import type { TrainStep } from "../trainer/train_step.ts";
import { writeAtomic } from "../util/write_atomic.ts";

/**
 * Before a resumed stage opens its buffer: makes the buffer's consumption record that of the
 * checkpoint resumed from (none: nothing consumed), so experiences whose training was lost with
 * the killed process are handed out again.
 */
export async function rewindBuffer(bufferDir: string, retired: readonly string[]): Promise<void> {
  await Deno.mkdir(bufferDir, { recursive: true });
  await writeAtomic(
    `${bufferDir}/${BUFFER_STATE_FILE}`,
    JSON.stringify({ version: 1, retired, useCounts: {} }) + "\n",
  );
}

/** What {@link StageCheckpoints} saves beside the train step. */
export interface StageCheckpointSources {
  /** The experience buffer whose handed-out experiences each checkpoint records. */
  bufferDir?: string;
  /** The PPO critic, saved under `critic/`. */
  critic?: CriticStep;
  /** The data source's cursor (`data_cursor` in the trainer state). */
  cursor?: () => unknown;
}

/** A stage's checkpoints of one train step, and the latest one saved or resumed from. */
export class StageCheckpoints {
  constructor(
    readonly stage: StageConfig,
    readonly stageDir: string,
    readonly trainStep: TrainStep,
    readonly sources: StageCheckpointSources,
    /** The checkpoint the stage resumed from, if any. */
    public latest?: string,
  ) {}

  /**
   * Saves a checkpoint at stage step `step`, recording in its trainer state the experiences the
   * buffer has handed out (so a resume from it hands out again exactly those taken after it),
   * the data cursor and the critic.
   */
  async save(step: number): Promise<void> {
    const { bufferDir, critic, cursor } = this.sources;
    let retired: string[] = [];
    if (bufferDir) {
      try {
        retired = JSON.parse(await Deno.readTextFile(`${bufferDir}/${BUFFER_STATE_FILE}`)).retired;
      } catch (err) {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      }
    }
    const extra = cursor ? { data_cursor: cursor() } : {};
    this.latest = await saveCheckpoint(
      this.stageDir,
      step,
      this.trainStep,
      { ...extra, stage: this.stage.stageName, buffer_retired: retired },
      { maxToKeep: this.stage.trainer.maxCheckpointsToKeep, critic },
    );
  }

  /** The final checkpoint at `step`: the latest one when it is of `step`, else a new one. */
  async saveFinal(step: number): Promise<string> {
    if (this.latest === undefined || !this.latest.endsWith(`step_${step}`)) await this.save(step);
    return this.latest!;
  }
}
