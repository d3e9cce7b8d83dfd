/**
 * The Trainer: turns one batch of experiences into weight updates. It computes advantages when
 * the algorithm computes them in the trainer, reference log-probs from the frozen reference
 * model when the loss needs them (a KL loss, DPO), then runs `ppo_epochs` optimizer steps of
 * the TrainStep graph on the batch. Where batches come from (the buffer's sample strategy or
 * an SFT dataset) and when to checkpoint is the stage runner's business.
 */

import type { Experience } from "../buffer/experience.ts";
import type { PolicyModel } from "../model/policy.ts";
import type { TrainStep } from "../trainer/train_step.ts";
import { applyAdvantages, type ConfiguredAdvantageFn } from "./apply_advantages.ts";

/** Options of a {@link Trainer}. */
export interface TrainerOptions {
  trainStep: TrainStep;
  /** Frozen model of the reference log-probs; needed when `trainStep.needsReference`. */
  referenceModel?: PolicyModel;
  /** The advantage fn when the trainer computes advantages. */
  advantageFn?: ConfiguredAdvantageFn;
  /** Optimizer steps per batch (`trainer.ppo_epochs`). */
  ppoEpochs: number;
  /** The rollout temperature, at which reference log-probs are taken. */
  temperature: number;
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

  /** Trains on `batch`; returns `actor/...`, `advantage/...` and `time/...` metrics. */
  async train(batch: Experience[]): Promise<Record<string, number>> {
    const started = performance.now();
    const metrics: Record<string, number> = {};
    if (this.options.advantageFn) {
      Object.assign(metrics, applyAdvantages(this.options.advantageFn, batch).metrics);
    }
    const { trainStep, referenceModel, temperature, ppoEpochs } = this.options;
    if (trainStep.needsReference && referenceModel) {
      const ref = await referenceModel.logprobs(batch.map((e) => e.tokens), { temperature });
      batch.forEach((e, i) => {
        e.referenceLogprobs = e.tokens.map((
          _,
          t,
        ) => (t > 0 && e.actionMask[t] ? ref[i][t - 1] : 0));
      });
    }
    let step: Record<string, number> = {};
    for (let epoch = 0; epoch < ppoEpochs; epoch++) step = await trainStep.step(batch);
    for (const [key, value] of Object.entries(step)) {
      metrics[`actor/${key === "kl_loss" ? "kl" : key}`] = value;
    }
    const seconds = (performance.now() - started) / 1000;
    const tokens = batch.reduce((sum, e) => sum + e.tokens.length, 0);
    metrics["time/train_s"] = seconds;
    metrics["actor/tokens_per_s"] = tokens / seconds;
    metrics["actor/batch_size"] = batch.length;
    return metrics;
  }
}
