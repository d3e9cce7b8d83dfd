/**
 * The PPO critic: the policy architecture's trunk plus a scalar value head `score.weight` [1, C]
 * (TRL's value-model naming), its teacher-forced per-token values, and one optimizer step on
 * verl's clipped value loss (token-mean only) as one compiled graph per batch shape. Does not
 * micro-batch or share a trunk with the policy; checkpoints carry it (`checkpoint.ts`, under
 * `critic/`) and the run loop builds it in `src/run/stage_trainer.ts`.
 */

import { readVariables } from "../graph/read_variables.ts";
import { getGpu, type GpuContext } from "../gpu/device.ts";
import { compileGraph, type Executable } from "../graph/executable.ts";
import { Graph } from "../graph/graph.ts";
import { graphCache } from "../graph/graph_cache.ts";
import { shapeSize, type Tensor, type Variable } from "../graph/tensor.ts";
import { add, mul, sub } from "../ops/binary.ts";
import { matmul } from "../ops/matmul.ts";
import { reshape } from "../ops/reshape.ts";
import { affine, scale, square } from "../ops/unary.ts";
import { abs, clamp, maximum, step } from "../algorithm/_piecewise.ts";
import { type LossTerm, maskedMean } from "../algorithm/loss_agg.ts";
import type { Experience } from "../buffer/experience.ts";
import { type ModelConfig, parseHfConfig } from "../model/hf_config.ts";
import { atNextTokenPositions, padBatch, paddedLength } from "../model/padded_batch.ts";
import { type ParameterSpec, parameterSpecs } from "../model/parameters.ts";
import {
  buildHidden,
  causalAttentionFn,
  type TokenInputs,
  type WeightLookup,
} from "../model/transformer.ts";
import { uploadTensor } from "../model/upload.ts";
import type { LruCache } from "../util/lru_cache.ts";
import { Mutex } from "../util/mutex.ts";
import type { AdamW } from "./adamw.ts";
import {
  compileOptimizerGraph,
  createOptimizer,
  type OptimizerConfig,
  type OptimizerGraph,
  runOptimizerStep,
} from "./optimizer_graph.ts";

/** Name of the value head parameter, [1, hidden] (HF `AutoModelForTokenClassification`). */
export const VALUE_HEAD = "score.weight";

/** verl's default `critic.cliprange_value`. */
export const DEFAULT_CLIPRANGE_VALUE = 0.5;

/** Compiled graphs a critic and its step each keep (one per batch shape): the 2 most recent. */
const CRITIC_GRAPHS = 2;

/**
 * The critic's parameters: every parameter of the architecture except the LM head (tied models
 * keep their embedding, which the trunk reads), then the value head, initialised to zeros so a
 * fresh critic predicts 0 everywhere.
 */
export function criticParameterSpecs(cfg: ModelConfig): ParameterSpec[] {
  return [
    ...parameterSpecs(cfg).filter((s) => s.name !== "lm_head.weight"),
    { name: VALUE_HEAD, shape: [1, cfg.hiddenSize], init: "zeros" },
  ];
}

/** A value model whose parameters live on the GPU. */
export class CriticModel {
  /** Serializes GPU work on this critic: compiled graphs share their input/output buffers. */
  readonly gpuLock: Mutex = new Mutex();
  readonly #graphs: LruCache<{ exe: Executable; inputs: TokenInputs; out: Tensor }>;

  constructor(
    readonly gpu: GpuContext,
    readonly config: ModelConfig,
    /** Parameters by name, those of {@link criticParameterSpecs}. */
    readonly params: ReadonlyMap<string, Variable>,
  ) {
    this.#graphs = graphCache(gpu, CRITIC_GRAPHS);
  }

  /** A parameter lookup binding each variable into graph `g`. */
  weights(g: Graph): WeightLookup {
    return (name) => {
      const v = this.params.get(name);
      if (!v) throw new Error(`Critic has no parameter "${name}"`);
      return g.variable(v);
    };
  }

  /**
   * Values [batch, seq] of `inputs` (each [batch, seq] i32): position t holds the value of the
   * state after tokens 0..t, i.e. the value of the token at t + 1 (verl's alignment).
   */
  buildValues(g: Graph, inputs: TokenInputs): Tensor {
    const w = this.weights(g);
    const hidden = buildHidden(
      this.config,
      w,
      inputs,
      causalAttentionFn(inputs.segments),
    );
    return reshape(matmul(hidden, w(VALUE_HEAD), { transB: true }), inputs.ids.shape);
  }

  /**
   * Per-token values of every sequence, aligned to its tokens: result[i][t] = V(seq[0..t-1]),
   * the value of the state in which token t is chosen (what GAE reads as `values`), and
   * result[i][0] = 0 (no state precedes the first token). One padded batch, one readback.
   */
  values(sequences: readonly (readonly number[])[]): Promise<number[][]> {
    return this.gpuLock.run(() => this.#values(sequences));
  }

  async #values(sequences: readonly (readonly number[])[]): Promise<number[][]> {
    if (sequences.length === 0) return [];
    const vocab = this.config.vocabSize;
    for (const [i, s] of sequences.entries()) {
      const bad = s.findIndex((id) => !Number.isInteger(id) || id < 0 || id >= vocab);
      if (s.length === 0 || bad >= 0) {
        throw new Error(
          `Cannot compute values of sequence ${i}: ${
            s.length === 0 ? "it is empty" : `token ${bad} is ${s[bad]}, outside [0, ${vocab})`
          }`,
        );
      }
    }
    const seq = bucket(sequences);
    const { exe, inputs, out } = await this.#valueGraph(sequences.length, seq);
    const { ids, positions, segments } = padBatch(sequences, seq, vocab);
    await exe.run(
      new Map([[inputs.ids, ids], [inputs.positions, positions], [inputs.segments, segments]]),
    );
    const [values] = await exe.read([out]);
    return sequences.map((s, b) => [0, ...values.subarray(b * seq, b * seq + s.length - 1)]);
  }

  #valueGraph(batch: number, seq: number) {
    const key = `${batch}x${seq}`;
    return this.#graphs.getOrCreate(key, async () => {
      const g = new Graph();
      const inputs = tokenInputs(g, batch, seq);
      const out = this.buildValues(g, inputs);
      return { exe: await compileGraph(this.gpu, [out], `values:${key}`), inputs, out };
    });
  }

  /** Reads every parameter back to the host (one readback), by name. */
  readParameters(): Promise<Map<string, Float32Array<ArrayBuffer>>> {
    return readVariables(this.gpu.device, this.params.values());
  }

  /** Frees the compiled graphs and the parameters. */
  destroy(): void {
    this.#graphs.clear();
    for (const v of this.params.values()) v.buffer.destroy();
  }

  /** {@link destroy}, for `using`. */
  [Symbol.dispose](): void {
    this.destroy();
  }
}

/** Options of {@link createCritic}. */
export interface CreateCriticOptions {
  gpu?: GpuContext;
}

/**
 * A critic for HF config `rawConfig` from host parameters by name: the trunk's (e.g. from
 * `initParameters`, or a policy's `readParameters`, whose LM head is ignored) and optionally
 * {@link VALUE_HEAD}, zeros when absent. Other names are ignored.
 */
export async function createCritic(
  rawConfig: Record<string, unknown>,
  parameters: ReadonlyMap<string, Float32Array<ArrayBuffer>>,
  options: CreateCriticOptions = {},
): Promise<CriticModel> {
  const gpu = options.gpu ?? await getGpu();
  const config = parseHfConfig(rawConfig, "config");
  const params = new Map<string, Variable>();
  try {
    for (const spec of criticParameterSpecs(config)) {
      const n = shapeSize(spec.shape);
      const data = parameters.get(spec.name) ??
        (spec.name === VALUE_HEAD ? new Float32Array(n) : undefined);
      if (!data || data.length !== n) {
        throw new Error(
          `Cannot create critic: parameter "${spec.name}" needs ${n} values, received ${
            data?.length ?? "none"
          }`,
        );
      }
      const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      params.set(
        spec.name,
        await uploadTensor(gpu, { name: spec.name, dtype: "F32", shape: spec.shape, bytes }),
      );
    }
  } catch (err) {
    for (const v of params.values()) v.buffer.destroy();
    throw err;
  }
  return new CriticModel(gpu, config, params);
}

/** Graph tensors of the clipped value loss, each f32 [B, T], aligned position by position. */
export interface ValueLossInputs {
  /** The critic's current values. */
  values: Tensor;
  /** The values at rollout time (the clip is centred on them). */
  oldValues: Tensor;
  /** The value targets (GAE returns). */
  returns: Tensor;
  /** 1 where a token counts (the action mask). */
  mask: Tensor;
}

/**
 * verl's clipped value loss (`compute_value_loss`, after PPO2's value clipping):
 * vpredclipped = oldValues + clamp(values - oldValues, -c, c),
 * loss = 0.5 * token-mean over the mask of max((values - returns)^2, (vpredclipped - returns)^2).
 * Metrics: `vf_clipfrac` (fraction of masked tokens where the clipped term is larger; unlike
 * verl, only tokens where the clip binds count, so f32 rounding is never counted as clipping)
 * and `vpred_mean`. Token-mean only (verl's default `loss_agg_mode`).
 */
export function clippedValueLoss(inputs: ValueLossInputs, cliprangeValue: number): LossTerm {
  if (!(cliprangeValue > 0 && Number.isFinite(cliprangeValue))) {
    throw new Error(
      `Cannot build the value loss: expected a positive finite cliprange_value, received ${cliprangeValue}`,
    );
  }
  const { values, oldValues, returns, mask } = inputs;
  const clipped = add(oldValues, clamp(sub(values, oldValues), -cliprangeValue, cliprangeValue));
  const unclippedLoss = square(sub(values, returns));
  const clippedLoss = square(sub(clipped, returns));
  // Where the clip does not bind, the two losses differ by rounding only: count those as equal.
  const binds = step(affine(abs(sub(values, oldValues)), 1, -cliprangeValue));
  return {
    loss: scale(maskedMean(maximum(clippedLoss, unclippedLoss), mask), 0.5),
    metrics: {
      vf_clipfrac: maskedMean(mul(binds, step(sub(clippedLoss, unclippedLoss))), mask),
      vpred_mean: maskedMean(values, mask),
    },
  };
}

/** How a critic step optimizes. */
export interface CriticStepConfig {
  /** AdamW and its learning-rate schedule. */
  optimizer: OptimizerConfig;
  /** Clip the global gradient norm to this (none when absent). */
  gradClip?: number;
  /** Half-width of the clip around the old values; default {@link DEFAULT_CLIPRANGE_VALUE}. */
  cliprangeValue?: number;
}

/** Per-token f32 inputs of the step graph. */
const STEP_INPUTS = ["mask", "returns", "oldValues"] as const;
type StepInput = typeof STEP_INPUTS[number];

interface CriticGraph extends OptimizerGraph {
  ints: TokenInputs;
  floats: Record<StepInput, Tensor>;
}

/** Trains a critic in place, one batch of experiences per `step`. */
export class CriticStep {
  readonly optimizer: AdamW;
  readonly #graphs: LruCache<CriticGraph>;
  readonly #cliprange: number;

  constructor(readonly critic: CriticModel, readonly config: CriticStepConfig) {
    this.#graphs = graphCache(critic.gpu, CRITIC_GRAPHS);
    this.#cliprange = config.cliprangeValue ?? DEFAULT_CLIPRANGE_VALUE;
    if (!(this.#cliprange > 0 && Number.isFinite(this.#cliprange))) {
      throw new Error(
        `Cannot create a critic step: expected a positive finite cliprangeValue, received ${this.#cliprange}`,
      );
    }
    const params = criticParameterSpecs(critic.config).map((s) => critic.params.get(s.name)!);
    this.optimizer = createOptimizer(critic.gpu, params, config.optimizer);
  }

  /**
   * One optimizer step on `experiences` (each needs `returns`) with `oldValues[i]` the critic's
   * values of experience i at rollout time, as {@link CriticModel.values} returns them (aligned
   * to its tokens). Returns vf_loss, vf_clipfrac, vpred_mean, grad_norm and lr, read back once.
   * Token 0 has no value position, so it is never trained on. `lrStep` is the step of the
   * learning-rate schedule (default: the optimizer's step count).
   */
  step(
    experiences: readonly Experience[],
    oldValues: readonly (readonly number[])[],
    lrStep?: number,
  ): Promise<Record<string, number>> {
    return this.critic.gpuLock.run(() => this.#step(experiences, oldValues, lrStep));
  }

  async #step(
    experiences: readonly Experience[],
    oldValues: readonly (readonly number[])[],
    lrStep: number | undefined,
  ): Promise<Record<string, number>> {
    if (experiences.length === 0) throw new Error("Cannot train the critic on an empty batch");
    if (oldValues.length !== experiences.length) {
      throw new Error(
        `Cannot train the critic: expected old values for ${experiences.length} experiences, received ${oldValues.length}`,
      );
    }
    const missing = experiences.find((e) => !e.returns);
    if (missing) {
      throw new Error(
        `Cannot train the critic on experience "${missing.info.eid}": it has no returns per token`,
      );
    }
    const fields: Record<StepInput, readonly (readonly number[])[]> = {
      mask: experiences.map((e) => e.actionMask),
      returns: experiences.map((e) => e.returns!),
      oldValues,
    };
    experiences.forEach((e, i) => {
      for (const name of STEP_INPUTS) {
        const row = fields[name][i];
        if (row.length !== e.tokens.length) {
          throw new Error(
            `Cannot train the critic on experience "${e.info.eid}": ${name} has ${row.length} entries, expected one per token (${e.tokens.length})`,
          );
        }
      }
    });
    const seq = bucket(experiences.map((e) => e.tokens));
    const graph = await this.#graph(experiences.length, seq);
    const batch = padBatch(experiences.map((e) => e.tokens), seq, this.critic.config.vocabSize);
    const feeds = new Map<Tensor, Int32Array<ArrayBuffer> | Float32Array<ArrayBuffer>>([
      [graph.ints.ids, batch.ids],
      [graph.ints.positions, batch.positions],
      [graph.ints.segments, batch.segments],
    ]);
    for (const name of STEP_INPUTS) {
      feeds.set(graph.floats[name], atNextTokenPositions(fields[name], seq));
    }
    return await runOptimizerStep(graph, this.optimizer, this.config.optimizer, feeds, lrStep);
  }

  #graph(batch: number, seq: number): Promise<CriticGraph> {
    const key = `${batch}x${seq}`;
    return this.#graphs.getOrCreate(key, () => this.#compile(key, batch, seq));
  }

  async #compile(key: string, batch: number, seq: number): Promise<CriticGraph> {
    const g = new Graph();
    const ints = tokenInputs(g, batch, seq);
    const float = (name: StepInput) => g.input([batch, seq], "f32", name);
    const floats = {
      mask: float("mask"),
      returns: float("returns"),
      oldValues: float("oldValues"),
    };
    const values = this.critic.buildValues(g, ints);
    const term = clippedValueLoss({ values, ...floats }, this.#cliprange);
    const compiled = await compileOptimizerGraph(this.critic.gpu, this.optimizer, term, {
      lossName: "vf_loss",
      gradClip: this.config.gradClip,
      label: `critic:${key}`,
    });
    return { ...compiled, ints, floats };
  }

  /** Frees the compiled graphs and the optimizer state. */
  destroy(): void {
    this.#graphs.clear();
    this.optimizer.destroy();
  }

  /** {@link destroy}, for `using`. */
  [Symbol.dispose](): void {
    this.destroy();
  }
}

/** The padded length of a batch of `sequences`: the longest, rounded up to the bucket. */
function bucket(sequences: readonly (readonly number[])[]): number {
  return paddedLength(Math.max(...sequences.map((s) => s.length)));
}

/** Ids, positions and segment ids, each an i32 input [batch, seq] of `g`. */
function tokenInputs(g: Graph, batch: number, seq: number): TokenInputs {
  const int = (name: string) => g.input([batch, seq], "i32", name);
  return { ids: int("ids"), positions: int("positions"), segments: int("segments") };
}
