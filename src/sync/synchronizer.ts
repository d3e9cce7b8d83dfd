/**
 * The synchronizer: decides when the trainer's weights are copied into the explorer's model and
 * which policy version each explore step samples with (Trinity's `sync_interval`,
 * `sync_offset`, `sync_style`). Versions count trainer steps: the trainer's weights after step t
 * are version t.
 *
 * - `fixed`: explore step s (1-based) samples with exactly version
 *   `interval * floor((s - 1 - offset) / interval)` (0 while negative): the explorer waits for
 *   the trainer to reach it, and the trainer waits, before moving past a sync point, until the
 *   explorer has taken that version (or will never need it). `offset` = 0 is on-policy; 1 is
 *   one-step-off pipelining (explore step s+1 runs while the trainer trains on step s).
 * - `explorer_driven`: every `interval` explore steps the explorer takes whatever version the
 *   trainer has; neither side waits (the buffer's capacity bounds how far the explorer runs
 *   ahead).
 * - `trainer_driven`: every `interval` train steps the trainer pushes its weights into the
 *   explorer's model (between two generation batches); neither side waits.
 *
 * The copy itself is injected (`copyWeights`; in a run, `weight_copy.ts`'s GPU-side copy), so the
 * coordination runs without a GPU. Holds no experiences and reads no files.
 */

import { Notifier } from "../util/notifier.ts";

/** Trinity's `synchronizer.sync_style`. */
export type SyncStyle = "fixed" | "explorer_driven" | "trainer_driven";

/** Options of a {@link Synchronizer}. */
export interface SynchronizerOptions {
  style: SyncStyle;
  interval: number;
  offset: number;
  /**
   * Copies the trainer's weights into the explorer's model; runs `then` before any further
   * generation can start (the synchronizer records the new version there).
   */
  copyWeights: (then: () => void) => Promise<void>;
  /** Told the new version after each copy (the rollout model stamps rollouts with it). */
  onSync: (version: number) => void;
  /** Version both models hold at start (the step of the checkpoint resumed from). */
  initialVersion: number;
  /** Explore steps already done (a resumed explorer's cursor). Default 0. */
  initialExplored?: number;
  /** Aborts every wait. */
  signal?: AbortSignal;
}

/** Coordinates weight hand-over between one explorer and one trainer. */
export class Synchronizer {
  #trainerVersion: number;
  #explorerVersion: number;
  #explorerDone = false;
  #trainerDone = false;
  #syncs = 0;
  #explored = 0;
  readonly #changes = new Notifier();

  constructor(readonly options: SynchronizerOptions) {
    const { interval, offset, initialVersion } = options;
    if (!(Number.isInteger(interval) && interval >= 1)) {
      throw new Error(
        `Cannot synchronize: sync_interval must be an integer >= 1, received ${interval}`,
      );
    }
    if (!(Number.isInteger(offset) && offset >= 0)) {
      throw new Error(
        `Cannot synchronize: sync_offset must be an integer >= 0, received ${offset}`,
      );
    }
    this.#trainerVersion = initialVersion;
    this.#explorerVersion = initialVersion;
    this.#explored = options.initialExplored ?? 0;
  }

  /** The version the explorer samples with now. */
  get explorerVersion(): number {
    return this.#explorerVersion;
  }

  /** Whether the explorer has finished (no more explore steps will come). */
  get explorerDone(): boolean {
    return this.#explorerDone;
  }

  /** The version of the trainer's weights (train steps done). */
  get trainerVersion(): number {
    return this.#trainerVersion;
  }

  /** The version explore step `step` samples with under `fixed`. */
  requiredVersion(step: number): number {
    const { interval, offset } = this.options;
    return interval * Math.floor(Math.max(0, step - 1 - offset) / interval);
  }

  /** Called by the explorer before explore step `step`: waits and copies as the style says. */
  async beforeExploreStep(step: number): Promise<void> {
    const { style, interval } = this.options;
    if (style === "fixed") {
      const required = this.requiredVersion(step);
      await this.#until(() => this.#trainerVersion >= required || this.#trainerDone);
      if (this.#trainerVersion > this.#explorerVersion) await this.#copy();
    } else if (style === "explorer_driven" && (step - 1) % interval === 0) {
      if (this.#trainerVersion > this.#explorerVersion) await this.#copy();
    }
  }

  /**
   * Called by the trainer before train step `step`: waits until the explorer has done explore
   * step `step` (or finished), and under `fixed`, past a sync point, until the explorer has
   * taken the version the step is about to overwrite (or has finished).
   */
  async beforeTrainStep(step: number): Promise<void> {
    const { style, interval } = this.options;
    const version = step - 1;
    if (style === "fixed" && version > 0 && version % interval === 0) {
      await this.#until(() => this.#explorerVersion >= version || this.#explorerDone);
    }
    await this.untilExplored(step);
  }

  /** Called by the explorer after explore step `step` is in the buffer. */
  exploreStepDone(step: number): void {
    this.#explored = step;
    this.#notify();
  }

  /** Waits until the explorer has done explore step `step` or finished. */
  async untilExplored(step: number): Promise<void> {
    await this.#until(() => this.#explored >= step || this.#explorerDone);
  }

  /** Called by the trainer after train step `step` (its weights are now version `step`). */
  async afterTrainStep(step: number): Promise<void> {
    this.#trainerVersion = step;
    this.#notify();
    if (this.options.style === "trainer_driven" && step % this.options.interval === 0) {
      await this.#copy();
    }
  }

  /**
   * After both loops: copies the trainer's final weights into the explorer's model when it holds
   * an older version (any style), e.g. for the stage's final evaluation.
   */
  async finalSync(): Promise<void> {
    if (this.#trainerVersion > this.#explorerVersion) await this.#copy();
  }

  /** The explorer will run no more steps: nothing waits for it any longer. */
  explorerFinished(): void {
    this.#explorerDone = true;
    this.#notify();
  }

  /** The trainer will run no more steps: nothing waits for it any longer. */
  trainerFinished(): void {
    this.#trainerDone = true;
    this.#notify();
  }

  /** `sync/...` metrics for logging. */
  metrics(): Record<string, number> {
    return {
      "sync/explorer_version": this.#explorerVersion,
      "sync/trainer_version": this.#trainerVersion,
      "sync/count": this.#syncs,
    };
  }

  async #copy(): Promise<void> {
    const version = this.#trainerVersion;
    await this.options.copyWeights(() => {
      this.#explorerVersion = version;
      this.options.onSync(version);
    });
    this.#syncs++;
    this.#notify();
  }

  async #until(ready: () => boolean): Promise<void> {
    await this.#changes.until(ready, this.options.signal);
  }

  #notify(): void {
    this.#changes.notify();
  }
}
