/**
 * The decoder as graph ops, read off the model's description (`model_config.ts`), following the
 * Hugging Face modeling code: token (and learned position) embeddings, then per layer an
 * attention block (norm, q/k/v, q/k norm, attention with RoPE as the layer's kind says, output
 * projection, optional post-norm, residual) and an MLP block (norm, gated or plain MLP, optional
 * post-norm, residual), then the final norm; in graphs that are differentiated each layer may be
 * a checkpointed region (`BuildOptions.recompute`). The fused inference paths are `fused_block.ts`'s;
 * attention itself is the caller's `AttentionFn`. Builds graphs only.
 */

import { checkpoint } from "../graph/checkpoint.ts";
import type { Tensor } from "../graph/tensor.ts";
import { add } from "../ops/binary.ts";
import { embedding } from "../ops/embedding.ts";
import { gated } from "../ops/gated.ts";
import { layerNorm } from "../ops/layernorm.ts";
import { reshape } from "../ops/reshape.ts";
import { rmsNorm } from "../ops/rmsnorm.ts";
import { sliceLast } from "../ops/slice.ts";
import { scale, unary } from "../ops/unary.ts";
import { BlockFusions, type BuildOptions, type NormedInput } from "./fused_block.ts";
import {
  project,
  type Projection,
  projectionOf,
  type Residual,
  residualAdd,
  residualInPlace,
} from "./linear_modules.ts";
import { layerPrefix, type ModelConfig } from "./model_config.ts";
import { layerLinears } from "./parameters.ts";
import type { AttentionFn, HiddenInputs, LayerAttention, WeightLookup } from "./transformer.ts";

/** Final hidden states [batch, seq, hidden] (after the last norm) of `cfg`'s decoder. */
export function decoderHidden(
  cfg: ModelConfig,
  w: WeightLookup,
  inputs: HiddenInputs,
  attention: AttentionFn,
  options: BuildOptions,
): Tensor {
  const layers = new DecoderLayers(cfg, w, inputs, attention, options);
  let h = embed(cfg, w, inputs);
  for (let l = 0; l < cfg.numLayers; l++) {
    const input = h;
    const layer = () => layers.mlp(layers.attention(input, l), l);
    h = options.recompute ? checkpoint(input.graph, layer) : layer();
  }
  return norm(cfg, w, h, cfg.names.finalNorm);
}

/** Token embeddings of `ids` from weight `name`, gathered shard by shard when it is sharded. */
export function tokenEmbedding(w: WeightLookup, name: string, ids: Tensor): Tensor {
  const shards = w.shards?.(name);
  if (!shards) return embedding(w(name), ids);
  return shards.map(({ weight, first }) => embedding(weight, ids, first)).reduce((a, b) =>
    add(a, b)
  );
}

/** Token embeddings (scaled as the family says) plus learned position embeddings if any. */
function embed(cfg: ModelConfig, w: WeightLookup, { ids, positions }: HiddenInputs): Tensor {
  let h = tokenEmbedding(w, cfg.names.embedding, ids);
  if (cfg.embeddingScale !== 1) h = scale(h, cfg.embeddingScale);
  const learned = cfg.names.positionEmbedding;
  return learned ? add(h, embedding(w(learned), positions)) : h;
}

/** The model's norm `module` (HF name without `.weight`) of `x`. */
function norm(cfg: ModelConfig, w: WeightLookup, x: Tensor, module: string): Tensor {
  const { kind, eps, weightOffset } = cfg.norm;
  const weight = w(`${module}.weight`);
  return kind === "rms_norm"
    ? rmsNorm(x, weight, eps, weightOffset)
    : layerNorm(x, weight, w(`${module}.bias`), eps);
}

/** The attention and MLP blocks of every layer of one graph. */
class DecoderLayers {
  readonly #fusions: BlockFusions;
  readonly #residual: Residual;
  readonly #batch: number;
  readonly #seq: number;

  constructor(
    readonly cfg: ModelConfig,
    readonly w: WeightLookup,
    readonly inputs: HiddenInputs,
    readonly attentionFn: AttentionFn,
    options: BuildOptions,
  ) {
    this.#fusions = new BlockFusions(cfg, options);
    this.#residual = options.inference ? residualInPlace : residualAdd;
    [this.#batch, this.#seq] = inputs.ids.shape;
  }

  /** `h` plus layer `l`'s attention block. */
  attention(h: Tensor, l: number): Tensor {
    const { cfg, w } = this;
    const p = layerPrefix(cfg, l);
    const { qkv, attentionOut } = layerLinears(cfg, l);
    const modules = qkv.map((m) => projectionOf(cfg, m));
    const packed = this.#packedQkv(h, p, modules);
    let [q, k, v] = packed.tensor
      ? this.#splitQkv(packed.tensor)
      : modules.map((m) => packed.x.project(w, m));
    // q/k norms over each head (after the split into heads) or the whole projection (before).
    const qkNorms = () => {
      if (cfg.names.qNorm) q = norm(cfg, w, q, p + cfg.names.qNorm);
      if (cfg.names.kNorm) k = norm(cfg, w, k, p + cfg.names.kNorm);
    };
    if (cfg.qkNormScope === "projection") qkNorms();
    q = this.#heads(q, cfg.numHeads);
    [k, v] = [k, v].map((t) => this.#heads(t, cfg.numKvHeads));
    if (cfg.qkNormScope !== "projection") qkNorms();
    const normed = cfg.names.qNorm || cfg.names.kNorm;
    const spec = this.#layerAttention(l);
    const attended = this.attentionFn(l, q, k, v, normed ? spec : { ...spec, qkv: packed.tensor });
    const merged = reshape(attended, [this.#batch, this.#seq, cfg.numHeads * cfg.headDim]);
    return this.#join(h, merged, projectionOf(cfg, attentionOut), p, cfg.names.postAttentionNorm);
  }

  /**
   * The attention's normed input `x` of `h` (layer prefix `p`), and q, k and v side by side as
   * one tensor where one product gives them so: the norm and the q/k/v products as one gemv
   * (`fused_block.ts`), or a fused qkv module; undefined where they are three products of `x`.
   */
  #packedQkv(h: Tensor, p: string, modules: Projection[]): { x: NormedInput; tensor?: Tensor } {
    const name = this.cfg.names.preAttentionNorm;
    const fused = name
      ? this.#fusions.qkvGemv(h, this.w, this.w(`${p + name}.weight`), modules)
      : undefined;
    const x = this.#normed(h, p, name);
    if (fused) return { x, tensor: fused };
    return { x, tensor: modules.length === 1 ? x.project(this.w, modules[0]) : undefined };
  }

  /** `h` plus layer `l`'s MLP block. */
  mlp(h: Tensor, l: number): Tensor {
    const { cfg, w } = this;
    const p = layerPrefix(cfg, l);
    const { mlpIn, mlpOut } = layerLinears(cfg, l);
    const down = projectionOf(cfg, mlpOut);
    const join = (act: Tensor) => this.#join(h, act, down, p, cfg.names.postMlpNorm);
    const [first, second] = mlpIn.map((m) => projectionOf(cfg, m));
    const preNorm = cfg.names.preMlpNorm;
    if (second && preNorm) {
      const normWeight = w(`${p + preNorm}.weight`);
      const act = this.#fusions.gemvActivation(h, w, normWeight, { gate: first, up: second, down });
      if (act) return join(act);
    }
    const x = this.#normed(h, p, preNorm);
    if (!second && "fc" in cfg.names.mlpIn) return join(unary(cfg.activation, x.project(w, first)));
    const [gate, up] = second
      ? [x.project(w, first), x.project(w, second)]
      : this.#splitHalves(x.project(w, first));
    return this.#fusions.downWithActivation(h, w, gate, up, down) ??
      join(gated(cfg.activation, gate, up));
  }

  /** Norm `name` of layer prefix `p` of `h` (h itself without one), as its readers take it. */
  #normed(h: Tensor, p: string, name: string | undefined): NormedInput {
    if (!name) return this.#fusions.normed(h, () => h);
    const module = p + name;
    return this.#fusions.normed(
      h,
      () => norm(this.cfg, this.w, h, module),
      this.w(`${module}.weight`),
    );
  }

  /**
   * The residual stream `h` plus module `m` of `x`, normed by `postNorm` first when given and
   * scaled by the description's residual scale.
   */
  #join(h: Tensor, x: Tensor, m: Projection, p: string, postNorm: string | undefined): Tensor {
    const factor = this.cfg.residualScale ?? 1;
    if (!postNorm && factor === 1) return this.#residual(h, x, this.w, m);
    let out = project(x, this.w, m);
    if (postNorm) out = norm(this.cfg, this.w, out, p + postNorm);
    return add(h, factor === 1 ? out : scale(out, factor));
  }

  /** q, k and v of a fused qkv product (q's columns, then k's, then v's). */
  #splitQkv(qkv: Tensor): Tensor[] {
    const q = this.cfg.numHeads * this.cfg.headDim;
    const kv = this.cfg.numKvHeads * this.cfg.headDim;
    return [sliceLast(qkv, 0, q), sliceLast(qkv, q, kv), sliceLast(qkv, q + kv, kv)];
  }

  /** gate and up of a fused gate_up product (gate's columns first). */
  #splitHalves(gateUp: Tensor): [Tensor, Tensor] {
    const ff = this.cfg.intermediateSize;
    return [sliceLast(gateUp, 0, ff), sliceLast(gateUp, ff, ff)];
  }

  /** [batch, seq, n * headDim] as [batch, seq, n, headDim]. */
  #heads(x: Tensor, n: number): Tensor {
    return reshape(x, [this.#batch, this.#seq, n, this.cfg.headDim]);
  }

  /** What layer `l`'s attention applies besides q, k and v. */
  #layerAttention(l: number): LayerAttention {
    const { rotary, window } = this.cfg.layers[l];
    const factor = rotary?.attentionFactor ?? 1;
    // The factor scales cos and sin: q.k by its square where whole heads rotate, else the
    // rotated dims only.
    const whole = !rotary || rotary.rotaryDim === this.cfg.headDim;
    const rotatedFactor = whole || factor === 1 ? {} : { factor };
    const { positions } = this.inputs;
    return {
      scale: this.cfg.attentionScale * (whole ? factor * factor : 1),
      ...(rotary ? { rotary: { positions, invFreq: rotary.invFreq, ...rotatedFactor } } : {}),
      ...(window ? { window } : {}),
      ...(this.cfg.attentionSoftcap ? { softcap: this.cfg.attentionSoftcap } : {}),
    };
  }
}
