/**
 * One optimizer step of the policy on a batch of experiences, as one compiled graph per batch
 * shape: teacher-forced log-probs of every sequence, the configured policy loss (and KL loss),
 * autodiff gradients, global-norm clipping and the AdamW update, all in one submit with one
 * readback of the metrics. The loss is the policy loss plus, when configured, a KL loss against
 * the experiences' reference log-probs and the entropy term. Experiences are laid out as a padded
 * [B, T] batch (T bucketed). Not here yet: micro-batching under a token budget with gradient
 * accumulation, and PPO mini-batches (the run loop repeats `step` for PPO epochs).
 */

import { Graph } from "../graph/graph.ts";
import type { Tensor } from "../graph/tensor.ts";
import { tokenLogprobs } from "../ops/token_logprobs.ts";
import { scale } from "../ops/unary.ts";
import { add } from "../ops/binary.ts";
import { type Args, configure } from "../algorithm/registry.ts";
import { ENTROPY_LOSS_FN } from "../algorithm/entropy.ts";
import { KL_FN, type KlArgs, klLoss } from "../algorithm/kl.ts";
import type { LossAggMode, LossTerm } from "../algorithm/loss_agg.ts";
import { POLICY_LOSS_FN, type PolicyLossInputName } from "../algorithm/policy_loss/mod.ts";
import type { Experience } from "../buffer/experience.ts";
import { atNextTokenPositions, padBatch, paddedLength } from "../model/padded_batch.ts";
import { parameterSpecs } from "../model/parameters.ts";
import type { PolicyModel } from "../model/policy.ts";
import { buildLogits } from "../model/transformer.ts";
import { AdamW, type AdamWOptions, defaultNoDecay } from "./adamw.ts";
import { compileOptimizerGraph, type OptimizerGraph, runOptimizerStep } from "./optimizer_graph.ts";
import type { LrScheduleConfig } from "./lr_schedule.ts";

/** What a training step optimizes and how. */
export interface TrainStepConfig {
  /** Registered policy loss fn name (`POLICY_LOSS_FN`), e.g. "ppo", "sft". */
  policyLossFn: string;
  /** Its `policy_loss_fn_args`. */
  policyLossArgs?: Readonly<Record<string, unknown>>;
  /** AdamW hyper-parameters; `lr` is the schedule's peak. */
  optimizer: Omit<AdamWOptions, "noDecay"> & Omit<LrScheduleConfig, "lr">;
  /** Clip the global gradient norm to this (none when absent). */
  gradClip?: number;
  /** Logits are divided by this before the log-softmax: the rollout temperature. Default 1. */
  temperature?: number;
  /**
   * Registered KL fn (`KL_FN`) of a KL loss against each experience's `referenceLogprobs`;
   * absent or "none": no KL loss. Aggregated with the policy loss's `loss_agg_mode`.
   */
  klLossFn?: string;
  /** Its `kl_loss_fn_args` (`kl_coef`). */
  klLossArgs?: Args;
  /** Registered entropy loss fn (`ENTROPY_LOSS_FN`); absent or "none": no entropy term. */
  entropyLossFn?: string;
  /** Its `entropy_loss_fn_args`. */
  entropyLossArgs?: Args;
}

/** Per-token f32 inputs the losses may read, aligned to next-token positions. */
const TOKEN_INPUTS = ["mask", "oldLogp", "advantages", "refLogp"] as const;
type TokenInput = typeof TOKEN_INPUTS[number];

interface StepGraph extends OptimizerGraph {
  ints: { ids: Tensor; positions: Tensor; segments: Tensor; targets: Tensor };
  floats: Partial<Record<TokenInput, Tensor>>;
}

/** Trains a policy model in place, one batch of experiences per `step`. */
export class TrainStep {
  readonly optimizer: AdamW;
  readonly #graphs = new Map<string, StepGraph>();
  readonly #loss;
  readonly #kl;
  readonly #entropy;
  readonly #needs: readonly PolicyLossInputName[];

  constructor(readonly model: PolicyModel, readonly config: TrainStepConfig) {
    this.#loss = configure(POLICY_LOSS_FN, config.policyLossFn, config.policyLossArgs);
    this.#kl = config.klLossFn && config.klLossFn !== "none"
      ? configure(KL_FN, config.klLossFn, config.klLossArgs)
      : undefined;
    this.#entropy = config.entropyLossFn && config.entropyLossFn !== "none"
      ? configure(ENTROPY_LOSS_FN, config.entropyLossFn, config.entropyLossArgs)
      : undefined;
    const needs = this.#loss.entry.needs;
    this.#needs = this.#kl && !needs.includes("refLogp") ? [...needs, "refLogp"] : needs;
    const unsupported = this.#needs.filter((n) => !(TOKEN_INPUTS as readonly string[]).includes(n));
    if (unsupported.length) {
      throw new Error(
        `Cannot train with policy loss fn "${config.policyLossFn}": input ${
          unsupported.join(", ")
        } is not supported by the trainer yet`,
      );
    }
    const params = parameterSpecs(model.config).map((s) => model.params.get(s.name)!);
    this.optimizer = new AdamW(model.gpu, params, {
      ...config.optimizer,
      noDecay: defaultNoDecay,
    });
  }

  /** Whether a step reads `referenceLogprobs` of the experiences (a KL loss or DPO). */
  get needsReference(): boolean {
    return this.#needs.includes("refLogp");
  }

  /**
   * One optimizer step on `experiences`; returns the metrics (loss, pg_loss, the loss fns'
   * metrics such as kl_loss and entropy, grad_norm, lr), read back once.
   */
  step(experiences: readonly Experience[]): Promise<Record<string, number>> {
    return this.model.gpuLock.run(() => this.#step(experiences));
  }

  async #step(experiences: readonly Experience[]): Promise<Record<string, number>> {
    if (experiences.length === 0) throw new Error("Cannot train on an empty batch");
    const longest = Math.max(...experiences.map((e) => e.tokens.length));
    const seq = paddedLength(longest);
    const graph = await this.#graph(experiences.length, seq);
    const batch = padBatch(experiences.map((e) => e.tokens), seq, this.model.config.vocabSize);
    const feeds = new Map<Tensor, Int32Array<ArrayBuffer> | Float32Array<ArrayBuffer>>([
      [graph.ints.ids, batch.ids],
      [graph.ints.positions, batch.positions],
      [graph.ints.segments, batch.segments],
      [graph.ints.targets, batch.targets],
    ]);
    for (const name of TOKEN_INPUTS) {
      const tensor = graph.floats[name];
      if (tensor) feeds.set(tensor, nextTokenValues(experiences, seq, name));
    }
    return await runOptimizerStep(graph, this.optimizer, this.config.optimizer, feeds);
  }

  async #graph(batch: number, seq: number): Promise<StepGraph> {
    const key = `${batch}x${seq}`;
    const cached = this.#graphs.get(key);
    if (cached) return cached;
    const g = new Graph();
    const int = (name: string) => g.input([batch, seq], "i32", name);
    const ints = {
      ids: int("ids"),
      positions: int("positions"),
      segments: int("segments"),
      targets: int("targets"),
    };
    const floats: Partial<Record<TokenInput, Tensor>> = {};
    for (const name of ["mask", ...this.#needs] as TokenInput[]) {
      floats[name] = g.input([batch, seq], "f32", name);
    }
    let logits = buildLogits(this.model.config, this.model.weights(g), ints);
    const temperature = this.config.temperature ?? 1;
    if (temperature !== 1) logits = scale(logits, 1 / temperature);
    const logp = tokenLogprobs(logits, ints.targets);
    const mask = floats.mask!;
    const policy = this.#loss.entry.build({ logp, mask, ...floats }, this.#loss.args);
    const terms: LossTerm[] = [{
      loss: policy.loss,
      metrics: { pg_loss: policy.loss, ...policy.metrics },
    }];
    if (this.#kl) {
      const mode = (this.#loss.args.loss_agg_mode ?? "token-mean") as LossAggMode;
      const kl = klLoss(this.#kl.entry, this.#kl.args as KlArgs, logp, floats.refLogp!, mask, mode);
      if (kl) terms.push(kl);
    }
    const entropy = this.#entropy?.entry.build({ logits, mask }, this.#entropy.args);
    if (entropy) terms.push(entropy);
    const term: LossTerm = {
      loss: terms.map((t) => t.loss).reduce((a, b) => add(a, b)),
      metrics: Object.assign({}, ...terms.map((t) => t.metrics)),
    };
    const compiled = await compileOptimizerGraph(this.model.gpu, this.optimizer, term, {
      lossName: "loss",
      gradClip: this.config.gradClip,
      label: `train:${key}`,
    });
    const entry = { ...compiled, ints, floats };
    this.#graphs.set(key, entry);
    return entry;
  }

  /** Frees the compiled graphs and the optimizer state. */
  destroy(): void {
    for (const { exe } of this.#graphs.values()) exe.destroy();
    this.optimizer.destroy();
  }
}

/** A per-token field of each experience at next-token positions (see `atNextTokenPositions`). */
function nextTokenValues(
  experiences: readonly Experience[],
  seq: number,
  name: TokenInput,
): Float32Array<ArrayBuffer> {
  return atNextTokenPositions(
    experiences.map((e) => {
      const source = name === "mask"
        ? e.actionMask
        : name === "oldLogp"
        ? e.logprobs
        : name === "advantages"
        ? e.advantages
        : e.referenceLogprobs;
      if (!source) {
        throw new Error(`Cannot train on experience "${e.info.eid}": it has no ${name} per token`);
      }
      return source;
    }),
    seq,
  );
}
