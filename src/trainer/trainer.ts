/**
 * The Trainer: the trainer's side of the RL loop, as Trinity's reads. `run` repeats sample ->
 * train -> sync -> save -> log: each train step draws a batch from its {@link BatchSource}
 * (the sample strategy over the buffers, or a dataset), `train`s on it, tells the synchronizer,
 * checkpoints every `save_interval` steps and logs the step's row. `train` turns one batch into
 * weight updates: advantages when the algorithm computes them in the trainer, reference
 * log-probs from the frozen reference model when the loss needs them (a KL loss, DPO), the
 * critic's values before GAE when there is a critic (PPO), then `ppo_epochs` passes over the
 * batch, each pass one optimizer step per mini-batch of `ppo_mini_batch_size` experiences (in
 * batch order; the TrainStep cuts each into micro-batches under the token budget; the critic
 * takes a step on the same mini-batch against the rollout-time values). The learning rate
 * follows the train step, not the optimizer step (verl steps its scheduler once per train step).
 * What a checkpoint holds and where rows go is the caller's (`run` gets them as functions).
 */

import type { Experience } from "../buffer/experience.ts";
import type { PolicyModel } from "../model/policy.ts";
import type { CriticStep } from "./critic.ts";
import type { StepOptions, TrainStep } from "./train_step.ts";
import { applyAdvantages, type ConfiguredAdvantageFn } from "../algorithm/apply_advantages.ts";
import type { PositionStat } from "../model/policy.ts";
import { actionStats } from "./action_stats.ts";
import type { BatchSource } from "../buffer/batch_source.ts";
import { formatMemoryUse, memoryMetrics, type MemoryUse } from "./memory_report.ts";

/** Options of a {@link Trainer}. */
export interface TrainerOptions {
  trainStep: TrainStep;
  /** Frozen model of the reference log-probs; needed when `trainStep.needsReference`. */
  referenceModel?: PolicyModel;
  /** The critic's train step, for algorithms with a critic (its values feed GAE). */
  critic?: CriticStep;
  /** The advantage fn when the trainer computes advantages. */
  advantageFn?: ConfiguredAdvantageFn;
  /** Passes over each batch (`trainer.ppo_epochs`). */
  ppoEpochs: number;
  /** Experiences per optimizer step (`trainer.ppo_mini_batch_size`); default the batch. */
  miniBatchSize?: number;
  /** The rollout temperature, at which reference log-probs are taken. */
  temperature: number;
  /** What the process holds, measured after each step for the log and `perf/` metrics. */
  measureMemory?: () => MemoryUse;
}

/** The synchronizer as the trainer sees it (`sync/synchronizer.ts`). */
export interface TrainerSync {
  /** Waits until train step `step` may start (its experiences explored, its version taken). */
  beforeTrainStep(step: number): Promise<void>;
  /** Train step `step` is done: its weights are version `step`. */
  afterTrainStep(step: number): Promise<void>;
  /** No train step follows. */
  trainerFinished(): void;
  /** `sync/...` metrics for the step's row. */
  metrics(): Record<string, number>;
}

/** Options of {@link Trainer.run}. */
export interface TrainerRunOptions {
  /** Rows asked of the source per step. */
  batchSize: number;
  /** Train steps already done (a resumed stage's checkpoint step). */
  startStep: number;
  /** The step to stop after (`buffer.total_steps`); Infinity: until the source ends. */
  totalSteps: number;
  sync?: TrainerSync;
  /** Receives each step's row; the row is logged before that step's checkpoint is saved. */
  logRow: (step: number, metrics: Record<string, number>) => Promise<void>;
  /** Checkpoints every `every` steps (0: never; the caller saves the final one). */
  checkpoint: { every: number; save: (step: number) => Promise<void> };
  /** Runs before each step with the weights' version (e.g. an evaluation when due). */
  beforeStep?: (version: number) => Promise<void>;
  /** Prints one line. */
  log: (line: string) => void;
  /**
   * Stops the loop between steps (and a wait for a batch); a checkpoint of the last step done is
   * written first when the latest one is older.
   */
  signal?: AbortSignal;
}

/** Trains the policy batch by batch. */
export class Trainer {
  constructor(readonly options: TrainerOptions) {
    if (options.trainStep.needsReference && !options.referenceModel) {
      throw new Error(
        "Cannot train: the loss needs reference log-probs and there is no reference model",
      );
    }
  }

  /**
   * Trains on `batch` (train step `options.lrStep` of the schedule, 0-based); returns
   * `actor/...` and `critic/...` (means over the optimizer steps), `advantage/...` and
   * `time/...` metrics.
   */
  async train(batch: Experience[], options: StepOptions = {}): Promise<Record<string, number>> {
    const started = performance.now();
    const metrics: Record<string, number> = {};
    const { trainStep, referenceModel, temperature, ppoEpochs, miniBatchSize, critic } =
      this.options;
    const oldValues = critic ? await critic.critic.values(batch.map((e) => e.tokens)) : undefined;
    if (this.options.advantageFn) {
      const current = await this.#currentStats(batch);
      const advantages = applyAdvantages(this.options.advantageFn, batch, {
        values: oldValues,
        current,
      });
      Object.assign(metrics, advantages.metrics);
    }
    if (trainStep.needsReference && referenceModel) {
      const [ref] = await actionStats(referenceModel, batch, ["logprob"], temperature);
      batch.forEach((e, i) => e.referenceLogprobs = ref[i]);
    }
    const size = miniBatchSize ?? batch.length;
    const sums: Record<string, number> = {};
    const add = (prefix: string, step: Record<string, number>) => {
      for (const [key, value] of Object.entries(step)) {
        const name = `${prefix}/${key === "kl_loss" ? "kl" : key}`;
        sums[name] = (sums[name] ?? 0) + value;
      }
    };
    let steps = 0;
    for (let epoch = 0; epoch < ppoEpochs; epoch++) {
      for (let first = 0; first < batch.length; first += size) {
        const prepared = await this.#miniBatchAdvantages(batch.slice(first, first + size));
        const mini = prepared.experiences;
        add("actor", prepared.metrics);
        add(
          "actor",
          await trainStep.step(mini, {
            lrStep: options.lrStep,
            isExpert: options.isExpert?.slice(first, first + size),
          }),
        );
        if (critic) {
          add(
            "critic",
            await critic.step(mini, oldValues!.slice(first, first + size), options.lrStep),
          );
        }
        steps++;
      }
    }
    for (const [key, value] of Object.entries(sums)) metrics[key] = value / steps;
    metrics["actor/optimizer_steps"] = steps;
    const seconds = (performance.now() - started) / 1000;
    const tokens = batch.reduce((sum, e) => sum + e.tokens.length, 0);
    metrics["time/train_s"] = seconds;
    metrics["actor/tokens_per_s"] = tokens / seconds;
    metrics["actor/batch_size"] = batch.length;
    return metrics;
  }

  /**
   * The mini-batch with the advantages its policy loss rewrites over the whole mini-batch
   * (`miniBatchAdvantages`: M2PO's mask), from the log-probs under the policy before the step;
   * the mini-batch as it is for the other losses.
   */
  async #miniBatchAdvantages(
    mini: Experience[],
  ): Promise<{ experiences: Experience[]; metrics: Record<string, number> }> {
    const { trainStep, temperature } = this.options;
    const loss = trainStep.config.policyLoss;
    if (!loss.entry.miniBatchAdvantages) return { experiences: mini, metrics: {} };
    const [current] = await actionStats(trainStep.model, mini, ["logprob"], temperature);
    const rows = mini.map((e, i) => ({
      logprobs: current[i],
      oldLogprobs: e.logprobs,
      advantages: e.advantages ?? e.tokens.map(() => 0),
      mask: e.actionMask,
    }));
    const { advantages, metrics } = loss.entry.miniBatchAdvantages(loss.args, rows);
    return { experiences: mini.map((e, i) => ({ ...e, advantages: advantages[i] })), metrics };
  }

  /**
   * Per experience, the log-probs, entropies (and nec) of its tokens under the policy before
   * the step, when the advantage fn reads them (the entropy-clipping fns); else undefined.
   */
  async #currentStats(batch: readonly Experience[]) {
    const needs = this.options.advantageFn?.entry.needs ?? [];
    if (!needs.includes("current")) return undefined;
    const stats: PositionStat[] = [
      "logprob",
      "entropy",
      ...(needs.includes("nec") ? ["nec" as const] : []),
    ];
    const model = this.options.trainStep.model;
    const values = await actionStats(model, batch, stats, this.options.temperature);
    return batch.map((_, i) => ({
      logprobs: values[0][i],
      entropy: values[1][i],
      nec: values[2]?.[i],
    }));
  }

  /**
   * The trainer's loop (see the file comment) from `startStep` until `totalSteps` or the end of
   * `source`; returns the last step done. Tells the synchronizer it finished however it ends.
   */
  async run(source: BatchSource, options: TrainerRunOptions): Promise<number> {
    const { sync, checkpoint, signal } = options;
    let step = options.startStep;
    let saved = step; // the step of the latest checkpoint
    let skippedTotal = 0;
    try {
      while (step < options.totalSteps) {
        signal?.throwIfAborted();
        await options.beforeStep?.(step);
        await sync?.beforeTrainStep(step + 1);
        const next = await source.next(options.batchSize, { policyVersion: step, signal });
        if (!next) break;
        step++;
        const row: Record<string, number> = { ...next.metrics };
        if (next.batch.length) {
          const trainOptions = { lrStep: step - 1, isExpert: next.isExpert };
          Object.assign(row, await this.train(next.batch, trainOptions));
          const use = this.options.measureMemory?.();
          if (use) {
            Object.assign(row, memoryMetrics(use));
            options.log(`train step ${step} memory use: ${formatMemoryUse(use)}`);
          }
        } else {
          options.log(`train step ${step}: no experience survived the pipeline; weights unchanged`);
        }
        if (next.skipped !== undefined) {
          skippedTotal += next.skipped;
          row["data/skipped_rows_total"] = skippedTotal;
        }
        await sync?.afterTrainStep(step);
        // The row goes first: a resume from this step's checkpoint must find it.
        await options.logRow(step, { ...row, ...sync?.metrics(), ...source.metrics?.() });
        if (checkpoint.every > 0 && step % checkpoint.every === 0) {
          await checkpoint.save(step);
          saved = step;
        }
      }
      return step;
    } catch (err) {
      // Stopped (Ctrl-C): the step under way has ended; keep what it trained.
      if (signal?.aborted && step > saved) {
        await checkpoint.save(step);
        options.log(`interrupted after step ${step}: checkpoint step_${step} written`);
      }
      throw err;
    } finally {
      sync?.trainerFinished();
    }
  }
}
