/**
 * A stage's checkpoints, saved with the buffer's consumption record (so a resume hands out again
 * exactly what the lost steps took: `ExperienceBuffer.rewind`), the data cursor and the critic.
 * The checkpoint format itself is `trainer/checkpoint.ts`.
 */

import { ExperienceBuffer } from "../buffer/experience_buffer.ts";
import type { StageConfig } from "../config/run_config.ts";
import { saveCheckpoint } from "../trainer/checkpoint.ts";
import type { CriticStep } from "../trainer/critic.ts";
import type { TrainStep } from "../trainer/train_step.ts";

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
    const retired = bufferDir ? await ExperienceBuffer.retired(bufferDir) : [];
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
