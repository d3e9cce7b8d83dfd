/**
 * One optimizer step of the policy on a batch of experiences, as one compiled graph per batch
 * shape: teacher-forced log-probs of every sequence, the configured policy loss (and KL loss),
 * autodiff gradients, global-norm clipping and the AdamW update, all in one submit with one
 * readback of the metrics. The loss is the policy loss plus, when configured, a KL loss against
 * the experiences' reference log-probs and the entropy term. Experiences are laid out as a
 * [rows, T] batch (T bucketed), one sequence per row or packed (`packSequences`).
 *
 * Under a token budget (`maxTokensPerMicroBatch`) the batch is cut into micro-batches (see
 * `micro_batch_plan.ts`): each runs forward and backward with its loss terms weighted so the
 * weighted sum equals the whole batch's loss (token-mean: the micro-batch's share of the
 * batch's action tokens; seq-mean modes and DPO pairs: its share of the sequences; the Dr. GRPO
 * sum-norm: its row length over the batch's), adds its gradients into GPU accumulators, and one
 * update graph then clips and applies them: the same step as the uncut batch, up to rounding.
 * The loss terms and the gradient norm are exact; a loss fn's other metrics are combined with
 * their term's weight, which is approximate for a metric aggregated otherwise than its loss.
 * When the loss can be cut, the budget is lowered so that a micro-batch's activations fit one
 * storage binding of the device. The logits are never whole: the LM head, log-softmax and their
 * gradient run over chunks of tokens (`model/token_scores.ts`), each recomputed in the backward;
 * a batch of more than one chunk steps as micro-batches even when uncut, so each chunk's gradient
 * of the head is added into the accumulator as it is made, not held until a sum.
 * PPO epochs and mini-batches are the Trainer's (`trainer.ts`).
 */

import { readBuffers } from "../gpu/readback.ts";
import { grad } from "../graph/autodiff.ts";
import { compileGraph, type Executable, type Feed } from "../graph/executable.ts";
import { Graph } from "../graph/graph.ts";
import { graphCache } from "../graph/graph_cache.ts";
import type { Tensor } from "../graph/tensor.ts";
import { add, mul } from "../ops/binary.ts";
import type { Args, Configured } from "../util/registry.ts";
import type { LruCache } from "../util/lru_cache.ts";
import type { EntropyLossFn } from "../algorithm/entropy.ts";
import { type KlArgs, type KlFn, klLoss } from "../algorithm/kl.ts";
import { LOSS_AGG_MODES, type LossAggMode, type LossTerm } from "../algorithm/loss_agg.ts";
import type { PolicyLossFn } from "../algorithm/policy_loss/mod.ts";
import type { Experience } from "../buffer/experience.ts";
import {
  bucketStart,
  columnsFrom,
  packAtNextTokenPositions,
  packBatch,
  paddedLength,
} from "../model/padded_batch.ts";
import type { PolicyModel } from "../model/policy.ts";
import { chunkTokens, tokenScores } from "../model/token_scores.ts";
import { scoredHidden } from "../model/transformer.ts";
import type { AdamW } from "./adamw.ts";
import { GradAccumulator } from "./grad_accumulator.ts";
import { storedActivationBytes } from "./memory_report.ts";
import { type MicroBatch, planMicroBatches } from "./micro_batch_plan.ts";
import {
  compileOptimizerGraph,
  compileUpdateGraph,
  createOptimizer,
  type OptimizerConfig,
  type OptimizerGraph,
  readOptimizerMetrics,
  runOptimizerStep,
  type UpdateGraph,
} from "./optimizer_graph.ts";

/** What a training step optimizes and how. */
export interface TrainStepConfig {
  /** The policy loss fn with its args: `configure(POLICY_LOSS_FN, "ppo", args)`. */
  policyLoss: Configured<PolicyLossFn>;
  /** AdamW and its learning-rate schedule. */
  optimizer: OptimizerConfig;
  /** Clip the global gradient norm to this (none when absent). */
  gradClip?: number;
  /** Logits are divided by this before the log-softmax: the rollout temperature. Default 1. */
  temperature?: number;
  /**
   * The KL fn (`KL_FN`, with `kl_coef`) of a KL loss against each experience's
   * `referenceLogprobs`; absent or "none": no KL loss. Aggregated with the policy loss's
   * `loss_agg_mode`.
   */
  klLoss?: Configured<KlFn>;
  /** The entropy loss fn (`ENTROPY_LOSS_FN`); absent or "none": no entropy term. */
  entropyLoss?: Configured<EntropyLossFn>;
  /** Most tokens (rows x row length) per micro-batch; absent: the whole batch at once. */
  maxTokensPerMicroBatch?: number;
  /** Pack several sequences per row when every loss term is a token-mean over tokens. */
  packSequences?: boolean;
  /**
   * Recompute each decoder layer's activations in the backward pass instead of keeping them
   * (Trinity's `enable_gradient_checkpointing`); "auto" (default): when the activations a
   * graph would keep reach {@link RECOMPUTE_FROM_BYTES}, where recomputing lowers the peak by
   * more than a small model's whole step holds.
   */
  gradientCheckpointing?: boolean | "auto";
}

/** Stored activations from which "auto" gradient checkpointing recomputes the layers. */
export const RECOMPUTE_FROM_BYTES = 128 * 2 ** 20;

/** Options of one {@link TrainStep.step}. */
export interface StepOptions {
  /** Step of the learning-rate schedule; default the optimizer's step count. */
  lrStep?: number;
  /** Per experience, whether it is expert data (the `mix` losses' `isExpert` input). */
  isExpert?: readonly boolean[];
}

/** Per-token f32 inputs the losses may read, aligned to next-token positions. */
const TOKEN_INPUTS = ["mask", "oldLogp", "advantages", "refLogp"] as const;
type TokenInput = typeof TOKEN_INPUTS[number];
/** Every input a loss may read: the per-token ones and the per-row `isExpert`. */
type LossInput = TokenInput | "isExpert";

/** The graph inputs of a [rows, seq] batch. */
interface BatchInputs {
  ints: { ids: Tensor; positions: Tensor; segments: Tensor; targets: Tensor };
  floats: Partial<Record<LossInput, Tensor>>;
  /** The policy loss's per-step scalars (`stepScalars`), by name. */
  scalars: Record<string, Tensor>;
}

/** A loss term and how its weight in a micro-batch is reckoned. */
interface WeightedTerm extends LossTerm {
  weighting: TermWeighting;
}

/** How a term's micro-batch weight is reckoned: by its aggregation mode, or by rows (DPO). */
type TermWeighting = { mode: LossAggMode; scaleFactor: number | null } | "rows";

type StepGraph = OptimizerGraph & BatchInputs;

/** Fused step graphs kept (one per batch shape, each with its activations): the latest. */
const STEP_GRAPHS = 1;
/** Micro-batch graphs kept: the 2 most recent shapes (at 0.5B, 2 x 96 tokens: 1.3 GB each). */
const MICRO_GRAPHS = 2;

/** A micro-batch's graph: forward, backward, gradients added into the accumulators. */
interface MicroGraph extends BatchInputs {
  exe: Executable;
  weights: Tensor[];
  /** Per term, its loss and metrics (unweighted), in output order. */
  terms: { loss: Tensor; metrics: [string, Tensor][] }[];
}

/** Trains a policy model in place, one batch of experiences per `step`. */
export class TrainStep {
  readonly optimizer: AdamW;
  /** Counters for tests and benchmarks: padded token positions the LM head skipped. */
  readonly stats = { skippedPositions: 0 };
  readonly #graphs: LruCache<StepGraph>;
  readonly #microGraphs: LruCache<MicroGraph>;
  #update?: UpdateGraph;
  #accumulator?: GradAccumulator;
  readonly #loss;
  readonly #kl;
  readonly #entropy;
  readonly #needs: readonly LossInput[];
  /**
   * Whether graphs leave out the columns before a batch's first scored token (see
   * {@link scoredFrom}): not when a term divides by the batch's width (`seq-mean-token-sum-norm`
   * without a `loss_scale_factor`).
   */
  readonly #skipsPrompts: boolean;

  constructor(readonly model: PolicyModel, readonly config: TrainStepConfig) {
    this.#graphs = graphCache(model.gpu, STEP_GRAPHS);
    this.#microGraphs = graphCache(model.gpu, MICRO_GRAPHS);
    this.#loss = config.policyLoss;
    // A KL loss with kl_coef 0 adds nothing: no term, and no reference model (as TRL's beta 0).
    const kl = config.klLoss?.name === "none" ? undefined : config.klLoss;
    this.#kl = kl && (kl.args as KlArgs).kl_coef !== 0 ? kl : undefined;
    this.#entropy = config.entropyLoss?.name === "none" ? undefined : config.entropyLoss;
    const needs: LossInput[] = [...this.#loss.entry.needs];
    if (this.#kl && !needs.includes("refLogp")) needs.push("refLogp");
    // corrected_k3 weighs the KL by the importance ratio.
    if (this.#kl?.name === "corrected_k3" && !needs.includes("oldLogp")) needs.push("oldLogp");
    this.#needs = needs;
    // A term in seq-mean-token-sum-norm without a scale factor divides by the batch's width;
    // the KL term takes the policy loss's mode, never its scale factor.
    const byWidth = (args: Args | undefined, factorless = false) =>
      args?.loss_agg_mode === "seq-mean-token-sum-norm" &&
      (factorless || args.loss_scale_factor == null);
    this.#skipsPrompts = !byWidth(this.#loss.args, this.#kl !== undefined) &&
      !byWidth(this.#entropy?.args);
    this.optimizer = createOptimizer(model.gpu, model.trainableVariables(), config.optimizer);
  }

  /** Whether a step reads `referenceLogprobs` of the experiences (a KL loss or DPO). */
  get needsReference(): boolean {
    return this.#needs.includes("refLogp");
  }

  /** Whether a step reads which experiences are expert data (`mix`). */
  get needsExpertFlags(): boolean {
    return this.#needs.includes("isExpert");
  }

  /**
   * One optimizer step on `experiences` (cut into micro-batches under the token budget);
   * returns the metrics (loss, pg_loss, the loss fns' metrics such as kl_loss and entropy,
   * grad_norm, lr, micro_batches), read back once.
   */
  step(
    experiences: readonly Experience[],
    options: StepOptions = {},
  ): Promise<Record<string, number>> {
    return this.model.gpuLock.run(() => this.#step(experiences, options));
  }

  async #step(
    experiences: readonly Experience[],
    options: StepOptions,
  ): Promise<Record<string, number>> {
    if (experiences.length === 0) throw new Error("Cannot train on an empty batch");
    if (this.needsExpertFlags && options.isExpert?.length !== experiences.length) {
      throw new Error(
        `Cannot train with policy loss fn "${this.#loss.name}": expected an expert flag per experience (${experiences.length}), received ${
          options.isExpert?.length ?? "none"
        }`,
      );
    }
    const lengths = experiences.map((e) => e.tokens.length);
    const plan = planMicroBatches(lengths, {
      maxTokens: this.#tokenBudget(lengths),
      split: this.#loss.entry.microBatching,
      pack: this.config.packSequences && this.#everyTermTokenMean(),
    });
    const schedule = { ...this.config.optimizer };
    if (plan.length === 1 && this.#fusesStep(plan[0])) {
      const [micro] = plan;
      const from = this.#scoredFrom(experiences, micro);
      const graph = await this.#graph(micro.rows.length, micro.seq, from);
      const feeds = this.#feeds(graph, experiences, micro, options, from);
      const metrics = await runOptimizerStep(
        graph,
        this.optimizer,
        schedule,
        feeds,
        options.lrStep,
      );
      return { ...metrics, micro_batches: 1 };
    }
    return await this.#accumulatedStep(experiences, plan, options);
  }

  /**
   * Whether `micro` (the whole batch) runs as one fused graph: only while its logits are one
   * chunk. A fused graph sums a weight's gradient terms where autodiff meets them, and the
   * checkpointed chunks of the LM head each make theirs before any is summed: one gradient of the
   * head (at 0.5B, 519 MiB) per chunk held at once. The accumulated step adds each term into the
   * gradient's buffer as it is made instead.
   */
  #fusesStep(micro: MicroBatch): boolean {
    return micro.rows.length * micro.seq <= chunkTokens(this.model.config.vocabSize);
  }

  /** The step over micro-batches, gradients accumulated (see the file comment). */
  async #accumulatedStep(
    experiences: readonly Experience[],
    plan: readonly MicroBatch[],
    options: StepOptions,
  ): Promise<Record<string, number>> {
    const params = this.optimizer.params;
    this.#accumulator ??= new GradAccumulator(this.model.gpu, params);
    // Each graph is fetched right before its run, one after another: micro-batches of one
    // shape share a graph, and fetching one may drop another (the cache keeps a few shapes).
    const from = plan.map((micro) => this.#scoredFrom(experiences, micro));
    const microGraph = (m: number) => this.#microGraph(plan[m].rows.length, plan[m].seq, from[m]);
    const terms: MicroGraph["terms"][] = [];
    const perRun = (await microGraph(0)).terms.reduce((n, t) => n + 1 + t.metrics.length, 0);
    const collected = this.model.gpu.device.createBuffer({
      label: "train:micro_metrics",
      size: plan.length * perRun * 4,
      usage: GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    });
    const weights = plan.map((micro) => this.#termWeights(experiences, micro));
    // The weights change only in the update after the last micro-batch: the micro-batches' runs
    // share their weight textures (filled once per step: `VariableTextures`).
    for (let m = 0; m < plan.length; m++) {
      const graph = await microGraph(m);
      terms.push(graph.terms);
      const feeds = this.#feeds(graph, experiences, plan[m], options, from[m]);
      graph.weights.forEach((w, k) => feeds.set(w, Float32Array.of(weights[m][k])));
      const outputs = graph.terms.flatMap((t) => [t.loss, ...t.metrics.map(([, x]) => x)]);
      await graph.exe.run(feeds, {
        after: (encoder) =>
          outputs.forEach((t, j) =>
            encoder.copyBufferToBuffer(graph.exe.buffer(t), 0, collected, (m * perRun + j) * 4, 4)
          ),
      });
    }
    this.#update ??= await compileUpdateGraph(this.model.gpu, this.optimizer, this.#accumulator, {
      gradClip: this.config.gradClip,
      label: "train:update",
    });
    const { lr, gradNorm } = await readOptimizerMetrics(
      this.#update,
      this.optimizer,
      this.config.optimizer,
      options.lrStep,
      () => this.#accumulator!.reset(),
    );
    const [raw] = await readBuffers(this.model.gpu.device, [{
      buffer: collected,
      bytes: plan.length * perRun * 4,
    }]);
    collected.destroy();
    const values = new Float32Array(raw);
    const metrics: Record<string, number> = { lr, grad_norm: gradNorm, micro_batches: plan.length };
    let loss = 0;
    for (let m = 0; m < plan.length; m++) {
      let j = m * perRun;
      terms[m].forEach((term, k) => {
        const w = weights[m][k];
        loss += w * values[j++];
        for (const [name] of term.metrics) metrics[name] = (metrics[name] ?? 0) + w * values[j++];
      });
    }
    metrics.loss = loss;
    return metrics;
  }

  /** Whether every loss term aggregates token-mean (so rows may hold several sequences). */
  #everyTermTokenMean(): boolean {
    const weightings = [this.#policyWeighting(), this.#entropyWeighting()];
    return weightings.every((w) => w === undefined || (w !== "rows" && w.mode === "token-mean"));
  }

  #policyWeighting(): TermWeighting {
    if (this.#loss.entry.microBatching === "pairs") return "rows";
    const own = this.#loss.entry.lossAggMode?.(this.#loss.args);
    return own ? { mode: own, scaleFactor: null } : aggregation(this.#loss.args);
  }

  #entropyWeighting(): TermWeighting | undefined {
    return this.#entropy ? aggregation(this.#entropy.args) : undefined;
  }

  /** Per loss term (policy, KL, entropy, in build order), its weight in `micro`. */
  #termWeights(experiences: readonly Experience[], micro: MicroBatch): number[] {
    const inMicro = micro.rows.flat().map((i) => experiences[i]);
    const longest = Math.max(...experiences.map((e) => e.tokens.length));
    const weight = (w: TermWeighting): number => {
      if (w === "rows") return micro.rows.length / experiences.length;
      switch (w.mode) {
        case "token-mean": {
          const total = actionTokens(experiences);
          return total === 0
            ? micro.rows.length / experiences.length
            : actionTokens(inMicro) / total;
        }
        case "seq-mean-token-sum":
        case "seq-mean-token-mean":
          return micro.rows.length / experiences.length;
        case "seq-mean-token-sum-norm":
          return w.scaleFactor === null ? micro.seq / paddedLength(longest) : 1;
      }
    };
    const policy = this.#policyWeighting();
    const entropy = this.#entropyWeighting();
    return [policy, ...(this.#kl ? [policy] : []), ...(entropy ? [entropy] : [])].map(weight);
  }

  /** Graph inputs of `micro` of `experiences`. */
  #feeds(
    graph: BatchInputs,
    experiences: readonly Experience[],
    micro: MicroBatch,
    options: StepOptions,
    from: number,
  ): Map<Tensor, Feed> {
    const rows = micro.rows.map((row) => row.map((i) => experiences[i]));
    const batch = packBatch(
      rows.map((row) => row.map((e) => e.tokens)),
      micro.seq,
      this.model.config.vocabSize,
    );
    const feeds = new Map<Tensor, Feed>([
      [graph.ints.ids, batch.ids],
      [graph.ints.positions, batch.positions],
      [graph.ints.segments, batch.segments],
      [graph.ints.targets, columnsFrom(batch.targets, micro.seq, from)],
    ]);
    for (const name of TOKEN_INPUTS) {
      const tensor = graph.floats[name];
      if (tensor) {
        feeds.set(tensor, columnsFrom(nextTokenValues(rows, micro.seq, name), micro.seq, from));
      }
    }
    if (graph.floats.isExpert) {
      feeds.set(
        graph.floats.isExpert,
        Float32Array.from(micro.rows, (row) => (options.isExpert![row[0]] ? 1 : 0)),
      );
    }
    const trainStep = (options.lrStep ?? this.optimizer.stepCount) + 1;
    const scalars = this.#loss.entry.stepScalars?.(this.#loss.args, trainStep) ?? {};
    for (const [name, tensor] of Object.entries(graph.scalars)) {
      feeds.set(tensor, Float32Array.of(scalars[name]));
    }
    return feeds;
  }

  /**
   * Tokens per micro-batch for sequences of `lengths`: `maxTokensPerMicroBatch`, lowered, when
   * the loss can be cut and the padded batch's activations would not fit one storage binding,
   * to what fits; undefined: no limit.
   */
  #tokenBudget(lengths: readonly number[]): number | undefined {
    const configured = this.config.maxTokensPerMicroBatch;
    if (this.#loss.entry.microBatching === undefined) return configured;
    const fit = this.model.activationTokens;
    const uncut = lengths.length * paddedLength(Math.max(...lengths));
    if ((configured ?? uncut) <= fit) return configured;
    return fit;
  }

  /**
   * The first column of `micro`'s padded rows whose next-token mask is set in any row, rounded
   * down to a bucket ({@link bucketStart}, so batches share graphs): the loss reads nothing
   * before it. 0 when prompts are not skipped.
   */
  #scoredFrom(experiences: readonly Experience[], micro: MicroBatch): number {
    if (!this.#skipsPrompts) return 0;
    const rows = micro.rows.map((row) => row.map((i) => experiences[i]));
    const from = scoredFrom(nextTokenValues(rows, micro.seq, "mask"), micro.seq);
    this.stats.skippedPositions += from * rows.length;
    return from;
  }

  /**
   * Inputs and loss terms of a [rows, seq] batch whose loss reads columns `from` .. seq - 1
   * (targets and per-token floats are [rows, seq - from]), built into `g`.
   */
  #buildLoss(
    g: Graph,
    rows: number,
    seq: number,
    from: number,
  ): BatchInputs & { terms: WeightedTerm[] } {
    const int = (name: string, width = seq) => g.input([rows, width], "i32", name);
    const ints = {
      ids: int("ids"),
      positions: int("positions"),
      segments: int("segments"),
      targets: int("targets", seq - from),
    };
    const floats: Partial<Record<LossInput, Tensor>> = {};
    for (const name of ["mask", ...this.#needs] as LossInput[]) {
      floats[name] = g.input(name === "isExpert" ? [rows] : [rows, seq - from], "f32", name);
    }
    const scalars: Record<string, Tensor> = {};
    for (const name of Object.keys(this.#loss.entry.stepScalars?.(this.#loss.args, 1) ?? {})) {
      scalars[name] = g.input([], "f32", name);
    }
    const cfg = this.model.config;
    const w = this.model.weights(g);
    const recompute = this.#recomputes(rows * seq);
    const { logp, entropy: perToken } = tokenScores(
      cfg,
      w,
      scoredHidden(cfg, w, ints, from, { recompute }),
      ints.targets,
      { temperature: this.config.temperature, recompute: true },
    );
    const mask = floats.mask!;
    const policy = this.#loss.entry.build({ logp, mask, ...floats, scalars }, this.#loss.args);
    const policyWeighting = this.#policyWeighting();
    const terms: WeightedTerm[] = [{
      loss: policy.loss,
      metrics: { pg_loss: policy.loss, ...policy.metrics },
      weighting: policyWeighting,
    }];
    if (this.#kl) {
      const mode = (this.#loss.args.loss_agg_mode ?? "token-mean") as LossAggMode;
      const klArgs = this.#kl.args as unknown as KlArgs;
      const kl = klLoss(
        this.#kl.entry,
        klArgs,
        logp,
        floats.refLogp!,
        mask,
        mode,
        null,
        floats.oldLogp,
      );
      if (kl) terms.push({ ...kl, weighting: policyWeighting });
    }
    const entropy = this.#entropy?.entry.build(
      { entropy: perToken, mask, isExpert: floats.isExpert },
      this.#entropy.args,
    );
    if (entropy) terms.push({ ...entropy, weighting: this.#entropyWeighting()! });
    return { ints, floats, scalars, terms };
  }

  /** Whether a graph of `tokens` tokens recomputes its layers (`gradientCheckpointing`). */
  #recomputes(tokens: number): boolean {
    const setting = this.config.gradientCheckpointing ?? "auto";
    if (setting !== "auto") return setting;
    return storedActivationBytes(this.model.config, tokens) >= RECOMPUTE_FROM_BYTES;
  }

  /** The fused graph of an uncut batch: loss, gradients, clipping and the update. */
  #graph(rows: number, seq: number, from: number): Promise<StepGraph> {
    const key = `${rows}x${seq}@${from}`;
    return this.#graphs.getOrCreate(key, () => this.#compile(key, rows, seq, from));
  }

  async #compile(key: string, rows: number, seq: number, from: number): Promise<StepGraph> {
    const { ints, floats, scalars, terms } = this.#buildLoss(new Graph(), rows, seq, from);
    const term: LossTerm = {
      loss: terms.map((t) => t.loss).reduce((a, b) => add(a, b)),
      metrics: Object.assign({}, ...terms.map((t) => t.metrics)),
    };
    const compiled = await compileOptimizerGraph(this.model.gpu, this.optimizer, term, {
      lossName: "loss",
      gradClip: this.config.gradClip,
      label: `train:${key}`,
    });
    return { ...compiled, ints, floats, scalars };
  }

  /** A micro-batch graph: weighted loss, gradients added into the accumulators. */
  #microGraph(rows: number, seq: number, from: number): Promise<MicroGraph> {
    const key = `${rows}x${seq}@${from}`;
    return this.#microGraphs.getOrCreate(key, () => this.#compileMicro(key, rows, seq, from));
  }

  async #compileMicro(
    key: string,
    rows: number,
    seq: number,
    from: number,
  ): Promise<MicroGraph> {
    const g = new Graph();
    const { ints, floats, scalars, terms } = this.#buildLoss(g, rows, seq, from);
    const weights = terms.map((_, k) => g.input([], "f32", `weight${k}`));
    const loss = terms.map((t, k) => mul(t.loss, weights[k])).reduce((a, b) => add(a, b));
    const params = this.optimizer.params.map((p) => g.variable(p));
    const sink = this.#accumulator!.sink(params);
    grad(loss, params, undefined, sink);
    const sums = sink.results();
    const outputs = terms.map((t) => ({ loss: t.loss, metrics: Object.entries(t.metrics) }));
    // Metrics first: nothing here writes the parameters, but keep the order of the fused graph.
    const exe = await compileGraph(this.model.gpu, [
      ...outputs.flatMap((t) => [t.loss, ...t.metrics.map(([, x]) => x)]),
      ...sums,
    ], `train:micro:${key}`);
    return { exe, weights, terms: outputs, ints, floats, scalars };
  }

  /** Frees the compiled graphs, the accumulators and the optimizer state. */
  destroy(): void {
    this.#graphs.clear();
    this.#microGraphs.clear();
    this.#update?.exe.destroy();
    this.#accumulator?.destroy();
    this.optimizer.destroy();
  }

  /** {@link destroy}, for `using`. */
  [Symbol.dispose](): void {
    this.destroy();
  }
}

/** The `loss_agg_mode` and `loss_scale_factor` of a component's args (token-mean when unset). */
function aggregation(args: Args): TermWeighting {
  const mode = (args.loss_agg_mode ?? "token-mean") as LossAggMode;
  if (!LOSS_AGG_MODES.includes(mode)) {
    throw new Error(`Cannot weigh a loss term: unknown loss_agg_mode ${JSON.stringify(mode)}`);
  }
  return { mode, scaleFactor: (args.loss_scale_factor ?? null) as number | null };
}

/** Action tokens at next-token positions (what token-mean losses average over). */
function actionTokens(experiences: readonly Experience[]): number {
  let n = 0;
  for (const e of experiences) {
    for (let t = 1; t < e.actionMask.length; t++) {
      n += e.actionMask[t] ? 1 : 0;
    }
  }
  return n;
}

/**
 * The first column of `mask` ([rows, seq], next-token positions) set in any row, rounded down to
 * a bucket ({@link bucketStart}); 0 when none is set.
 */
export function scoredFrom(mask: ArrayLike<number>, seq: number): number {
  let first = seq;
  for (let i = 0; i < mask.length; i++) {
    if (mask[i] !== 0) first = Math.min(first, i % seq);
  }
  return first === seq ? 0 : bucketStart(first);
}

/** A per-token field of each row's experiences at next-token positions. */
function nextTokenValues(
  rows: readonly (readonly Experience[])[],
  seq: number,
  name: TokenInput,
): Float32Array<ArrayBuffer> {
  return packAtNextTokenPositions(
    rows.map((row) =>
      row.map((e) => {
        const source = name === "mask"
          ? e.actionMask
          : name === "oldLogp"
          ? e.logprobs
          : name === "advantages"
          ? e.advantages
          : e.referenceLogprobs;
        if (!source) {
          throw new Error(
            `Cannot train on experience "${e.info.eid}": it has no ${name} per token`,
          );
        }
        return source;
      })
    ),
    seq,
  );
}
