/**
 * The synchronizer of a trainer whose explorers run in other processes (a `TrainerSync`):
 * train step t waits until explore steps 1..t are all done (their experiences ingested), as in
 * one process; after a step at a sync point (every `interval` steps) it publishes the weights as
 * that version. The objects of the versions an explorer may still be asked for stay: under
 * `fixed` no explore step still to run needs a version older than
 * `t - (offset + interval)`. Explorers never take a version the trainer has not published, so
 * the buffer's future-version rule holds; its staleness window counts from the trainer's version.
 */

import { beginActivity } from "../util/activity.ts";
import type { ExperienceBuffer } from "../buffer/experience_buffer.ts";
import type { PolicyModel } from "../model/policy.ts";
import type { TrainerSync } from "../trainer/trainer.ts";
import type { ExperienceIngest } from "./experience_ingest.ts";
import type { NatsLink } from "./nats_link.ts";
import { publishWeights, type WeightDType } from "./weight_broadcast.ts";

/** Options of a {@link RemoteTrainerSync}. */
export interface RemoteTrainerSyncOptions {
  link: NatsLink;
  ingest: ExperienceIngest;
  buffer: ExperienceBuffer;
  /** The trainer's model. */
  model: PolicyModel;
  interval: number;
  offset: number;
  /** How weights travel. */
  dtype: WeightDType;
  signal?: AbortSignal;
}

/** A trainer's synchronizer across processes (see the file comment). */
export class RemoteTrainerSync implements TrainerSync {
  #published = -1;
  #broadcastS = 0;

  constructor(readonly options: RemoteTrainerSyncOptions) {}

  /** Publishes version `version` (the start version, or a sync point's). */
  async publish(version: number): Promise<void> {
    const { link, model, interval, offset, dtype } = this.options;
    const keepFrom = version - (offset + interval);
    this.#broadcastS = await publishWeights(link, model, version, keepFrom, dtype);
    this.#published = version;
  }

  async beforeTrainStep(step: number): Promise<void> {
    using _waiting = beginActivity(`waiting for explore step ${step} from the explorers`);
    await this.options.ingest.untilDone(step, this.options.signal);
  }

  async afterTrainStep(step: number): Promise<void> {
    this.options.buffer.setPolicyVersion(step);
    if (step % this.options.interval === 0) await this.publish(step);
  }

  trainerFinished(): void {}

  metrics(): Record<string, number> {
    return {
      "sync/trainer_version": this.options.buffer.policyVersion,
      "sync/published_version": this.#published,
      "sync/broadcast_s": this.#broadcastS,
      "cluster/explore_steps_done": this.options.ingest.doneSteps,
    };
  }
}
