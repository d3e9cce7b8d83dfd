/**
 * The synchronizer of an explorer in another process than the trainer (an `ExplorerSync`):
 * before each explore step it claims the step's task batch from the queue, then takes weights
 * as the sync style says. `fixed`: the batch of explore step s samples with exactly version
 * `interval * floor((s - 1 - offset) / interval)` (the one-process rule, s being the batch's
 * step in the run, not this explorer's count), waiting until the trainer has published it;
 * `explorer_driven`: every `interval` of this explorer's steps it loads the newest version;
 * `trainer_driven`: it loads the newest version before every step. It polls the KV's `weights`
 * record every {@link POLL_MS} while it waits.
 */

import type { ExplorerSync } from "../explorer/explorer.ts";
import type { PolicyModel } from "../model/policy.ts";
import type { SyncStyle } from "../sync/synchronizer.ts";
import type { NatsLink } from "./nats_link.ts";
import type { TaskQueue } from "./task_queue.ts";
import { loadWeights, newestWeights } from "./weight_broadcast.ts";

/** Milliseconds between two looks at the newest weights version while waiting. */
export const POLL_MS = 200;

/** Options of a {@link RemoteExplorerSync}. */
export interface RemoteExplorerSyncOptions {
  link: NatsLink;
  queue: TaskQueue;
  /** The explorer's model, loaded in place. */
  model: PolicyModel;
  style: SyncStyle;
  interval: number;
  offset: number;
  /** Told each version loaded (the rollout model stamps rollouts with it). */
  onSync: (version: number, seconds: number) => void;
  signal?: AbortSignal;
}

/** An explorer's synchronizer across processes (see the file comment). */
export class RemoteExplorerSync implements ExplorerSync {
  /** The version the model holds; -1 before the first load. */
  #version = -1;

  constructor(readonly options: RemoteExplorerSyncOptions) {}

  /** The version the explorer samples with (-1 before the first load). */
  get version(): number {
    return this.#version;
  }

  async beforeExploreStep(step: number): Promise<void> {
    const { queue, style, interval, offset } = this.options;
    const runStep = await queue.peekStep();
    if (runStep === null) return;
    if (style === "fixed") {
      const required = interval * Math.floor(Math.max(0, runStep - 1 - offset) / interval);
      await this.#waitFor(required);
      if (required !== this.#version) await this.#load(required);
    } else if (style === "trainer_driven" || (step - 1) % interval === 0 || this.#version < 0) {
      const newest = await this.#waitFor(0);
      if (newest !== this.#version) await this.#load(newest);
    }
  }

  exploreStepDone(): void {}

  explorerFinished(): void {}

  /** Waits until version `version` or newer is published; returns the newest. */
  async #waitFor(version: number): Promise<number> {
    for (;;) {
      this.options.signal?.throwIfAborted();
      const newest = await newestWeights(this.options.link);
      if (newest && newest.version >= version) return newest.version;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  async #load(version: number): Promise<void> {
    const seconds = await loadWeights(this.options.link, this.options.model, version);
    this.#version = version;
    this.options.onSync(version, seconds);
  }
}
