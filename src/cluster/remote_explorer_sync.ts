/**
 * The synchronizer of an explorer in another process than the trainer (an `ExplorerSync`):
 * before each explore step it claims the step's task batch from the queue, then takes weights
 * as the sync style says. `fixed`: the batch of explore step s samples with exactly version
 * `interval * floor((s - 1 - offset) / interval)` (the one-process rule, s being the batch's
 * step in the run, not this explorer's count), waiting until the trainer has published it; a
 * batch still waiting after `ack_wait` is given back and the next one claimed (the version may
 * wait on an earlier batch whose explorer died, redelivered to whoever claims first);
 * `explorer_driven`: every `interval` of this explorer's steps it loads the newest version;
 * `trainer_driven`: it loads the newest version before every step. It watches the KV's `weights`
 * record, and reads it again every {@link POLL_MS} in case the watch was lost with a connection.
 */

import type { ExplorerSync } from "../explorer/explorer.ts";
import type { PolicyModel } from "../model/policy.ts";
import type { SyncStyle } from "../sync/synchronizer.ts";
import { Notifier } from "../util/notifier.ts";
import { KV_KEYS, type NatsLink } from "./nats_link.ts";
import type { TaskQueue } from "./task_queue.ts";
import {
  loadWeights,
  newestWeights,
  type WeightDType,
  type WeightsRecord,
} from "./weight_broadcast.ts";

/** Milliseconds between two reads of the newest weights version while waiting. */
export const POLL_MS = 1000;

/** Options of a {@link RemoteExplorerSync}. */
export interface RemoteExplorerSyncOptions {
  link: NatsLink;
  queue: TaskQueue;
  /** The explorer's model, loaded in place. */
  model: PolicyModel;
  style: SyncStyle;
  interval: number;
  offset: number;
  /** How weights travel. */
  dtype: WeightDType;
  /** Told each version loaded (the rollout model stamps rollouts with it). */
  onSync: (version: number, seconds: number) => void;
  signal?: AbortSignal;
}

/** An explorer's synchronizer across processes (see the file comment). */
export class RemoteExplorerSync implements ExplorerSync {
  /** The version the model holds; -1 before the first load. */
  #version = -1;
  /** The newest version published, as last seen; -1 before any. */
  #newest = -1;
  readonly #published = new Notifier();
  #watching = false;

  constructor(readonly options: RemoteExplorerSyncOptions) {}

  /** The version the explorer samples with (-1 before the first load). */
  get version(): number {
    return this.#version;
  }

  async beforeExploreStep(step: number): Promise<void> {
    const { queue, style, interval, offset } = this.options;
    if (style === "fixed") {
      for (;;) {
        const runStep = await queue.peekStep();
        if (runStep === null) return;
        const required = interval * Math.floor(Math.max(0, runStep - 1 - offset) / interval);
        if (await this.#waitFor(required, queue.ackWaitS * 1000) !== undefined) {
          if (required !== this.#version) await this.#load(required);
          return;
        }
        // The version waits on an earlier batch nobody holds (its explorer died): give this one
        // back so that the earlier one, redelivered, can be claimed, here or by another explorer.
        queue.release();
      }
    }
    if (await queue.peekStep() === null) return;
    if (style === "trainer_driven" || (step - 1) % interval === 0 || this.#version < 0) {
      const newest = await this.#waitFor(0) ?? this.#newest;
      if (newest !== this.#version) await this.#load(newest);
    }
  }

  exploreStepDone(): void {}

  explorerFinished(): void {}

  /**
   * Waits until version `version` or newer is published; returns the newest, or undefined when
   * `timeoutMs` passed first.
   */
  async #waitFor(version: number, timeoutMs?: number): Promise<number | undefined> {
    this.#watch();
    const poll = setInterval(() => this.#see(newestWeights(this.options.link)), POLL_MS);
    const timeout = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs);
    const signals = [this.options.signal, timeout].filter((s) => s !== undefined);
    try {
      this.#see(newestWeights(this.options.link));
      await this.#published.until(() => this.#newest >= version, AbortSignal.any(signals));
      return this.#newest;
    } catch (err) {
      if (timeout?.aborted && !this.options.signal?.aborted) return undefined;
      throw err;
    } finally {
      clearInterval(poll);
    }
  }

  /** Follows the `weights` record (once per process; a lost watch leaves the polls). */
  #watch(): void {
    if (this.#watching) return;
    this.#watching = true;
    (async () => {
      const updates = await this.options.link.kv.watch({ key: KV_KEYS.weights });
      for await (const entry of updates) {
        if (entry.value.length) this.#see(Promise.resolve(entry.json<WeightsRecord>()));
      }
    })().catch(() => this.#watching = false);
  }

  #see(record: Promise<WeightsRecord | undefined>): void {
    record.then((r) => {
      if (r && r.version > this.#newest) {
        this.#newest = r.version;
        this.#published.notify();
      }
    }, () => {});
  }

  async #load(version: number): Promise<void> {
    const { link, model, dtype } = this.options;
    const seconds = await loadWeights(link, model, version, dtype);
    this.#version = version;
    this.options.onSync(version, seconds);
  }
}
