/**
 * Any decoder the family table describes as an ONNX graph, following `src/model/decoder.ts` step
 * by step: token (scaled) and learned position embeddings, per layer the attention block (norm,
 * q/k/v or fused qkv, q/k norm, RoPE with the layer kind's inverse frequencies, grouped-query
 * attention, output projection, optional post-norm, scaled residual) and the MLP block (gated,
 * fused gate_up or plain), the final norm, and the tied or untied, optionally scaled and
 * soft-capped, output head.
 * Keys and values come through the attention context, so one builder serves the full-sequence
 * graph and the KV-cached one.
 */

import { layerPrefix, type ModelConfig, type RotarySpec } from "../model/model_config.ts";
import { layerLinears, type LinearSpec } from "../model/parameters.ts";
import {
  applyRope,
  type AttentionContext,
  groupedAttention,
  ropeTables,
} from "./onnx_attention.ts";
import type { OnnxGraphBuilder } from "./onnx_graph_builder.ts";
import { activation, conv1d, layerNorm, linear, reshape, rmsNorm } from "./onnx_layers.ts";

/** An ONNX value holding a parameter, by its Hugging Face name. */
export type OnnxWeights = (name: string) => string;

/** Logits [batch, seq, vocab] of the decoder `cfg` describes on int64 `ids` [batch, seq]. */
export function decoderLogits(
  b: OnnxGraphBuilder,
  cfg: ModelConfig,
  w: OnnxWeights,
  ids: string,
  context: AttentionContext,
): string {
  const layers = new OnnxDecoderLayers(b, cfg, w, context);
  let h = b.op("Gather", [w(cfg.names.embedding), ids], { axis: { int: 0 } });
  if (cfg.embeddingScale !== 1) h = b.op("Mul", [h, b.floats([cfg.embeddingScale], [])]);
  const learned = cfg.names.positionEmbedding;
  if (learned) {
    h = b.op("Add", [h, b.op("Gather", [w(learned), context.positions], { axis: { int: 0 } })]);
  }
  for (let l = 0; l < cfg.numLayers; l++) h = layers.mlp(layers.attention(h, l), l);
  const head = cfg.tieWordEmbeddings ? cfg.names.embedding : cfg.names.lmHead;
  const product = linear(b, layers.norm(h, cfg.names.finalNorm), w(head));
  const logits = cfg.logitScale === undefined
    ? product
    : b.op("Mul", [product, b.floats([cfg.logitScale], [])]);
  const cap = cfg.finalLogitSoftcap;
  if (cap === undefined) return logits;
  const capped = b.op("Tanh", [b.op("Div", [logits, b.floats([cap], [])])]);
  return b.op("Mul", [capped, b.floats([cap], [])]);
}

/** The blocks of every layer on one graph builder. */
class OnnxDecoderLayers {
  /** RoPE cos and sin tables, one per distinct rotary spec (attention kind). */
  readonly #ropeTables = new Map<RotarySpec, { cos: string; sin: string }>();

  constructor(
    readonly b: OnnxGraphBuilder,
    readonly cfg: ModelConfig,
    readonly w: OnnxWeights,
    readonly context: AttentionContext,
  ) {}

  /** The model's norm `module` of x over its last axis (`lastAxis`), or x without one. */
  norm(x: string, module: string | undefined, lastAxis = 2): string {
    if (!module) return x;
    const { b, w } = this;
    const { kind, eps, weightOffset } = this.cfg.norm;
    if (kind === "layer_norm") {
      return layerNorm(b, x, w(`${module}.weight`), w(`${module}.bias`), eps);
    }
    const weight = weightOffset === 0
      ? w(`${module}.weight`)
      : b.op("Add", [w(`${module}.weight`), b.floats([weightOffset], [])]);
    return rmsNorm(b, x, weight, eps, lastAxis);
  }

  /** Module m of x. */
  linear(x: string, m: LinearSpec): string {
    const { b, w } = this;
    const bias = m.bias ? w(`${m.module}.bias`) : undefined;
    const weight = w(`${m.module}.weight`);
    return this.cfg.names.conv1d ? conv1d(b, x, weight, bias) : linear(b, x, weight, bias);
  }

  attention(h: string, l: number): string {
    const { b, cfg } = this;
    const { names, headDim: D } = cfg;
    const p = layerPrefix(cfg, l);
    const { qkv, attentionOut } = layerLinears(cfg, l);
    const x = this.norm(h, names.preAttentionNorm && p + names.preAttentionNorm);
    const sizes = [cfg.numHeads, cfg.numKvHeads, cfg.numKvHeads];
    const flat = qkv.length === 3
      ? qkv.map((m) => this.linear(x, m))
      : b.ops("Split", [this.linear(x, qkv[0]), b.int64s(sizes.map((n) => n * D))], 3, {
        axis: { int: 2 },
      });
    // q/k norms over the whole projection (before the split into heads) or each head (after).
    const wholeProjection = cfg.qkNormScope === "projection";
    const qkNorm = (t: string, name: string | undefined) =>
      wholeProjection && name ? this.norm(t, p + name) : t;
    const [fq, fk, fv] = [qkNorm(flat[0], names.qNorm), qkNorm(flat[1], names.kNorm), flat[2]];
    let [q, k, v] = [fq, fk, fv].map((t, i) => reshape(b, t, [0, 0, sizes[i], D]));
    if (!wholeProjection && names.qNorm) q = this.norm(q, p + names.qNorm, 3);
    if (!wholeProjection && names.kNorm) k = this.norm(k, p + names.kNorm, 3);
    const { rotary, window } = cfg.layers[l];
    if (rotary) {
      const tables = this.#tables(rotary);
      [q, k] = [q, k].map((t) => applyRope(b, t, tables, D, rotary.rotaryDim));
    }
    const layout = {
      heads: cfg.numHeads,
      kvHeads: cfg.numKvHeads,
      headDim: D,
      scale: cfg.attentionScale,
      ...(cfg.attentionSoftcap ? { softcap: cfg.attentionSoftcap } : {}),
    };
    const keysValues = this.context.keysValues(l, k, v);
    const attn = groupedAttention(b, q, keysValues, layout, this.context.bias(window));
    const out = this.norm(
      this.linear(attn, attentionOut),
      names.postAttentionNorm && p + names.postAttentionNorm,
    );
    return this.#residual(h, out);
  }

  mlp(h: string, l: number): string {
    const { b, cfg } = this;
    const { names } = cfg;
    const p = layerPrefix(cfg, l);
    const { mlpIn, mlpOut } = layerLinears(cfg, l);
    const x = this.norm(h, names.preMlpNorm && p + names.preMlpNorm);
    let act: string;
    if ("fc" in names.mlpIn) act = activation(b, cfg.activation, this.linear(x, mlpIn[0]));
    else {
      const ff = cfg.intermediateSize;
      const [gate, up] = mlpIn.length === 2
        ? mlpIn.map((m) => this.linear(x, m))
        : b.ops("Split", [this.linear(x, mlpIn[0]), b.int64s([ff, ff])], 2, { axis: { int: 2 } });
      act = b.op("Mul", [activation(b, cfg.activation, gate), up]);
    }
    const out = this.norm(this.linear(act, mlpOut), names.postMlpNorm && p + names.postMlpNorm);
    return this.#residual(h, out);
  }

  /** `h + out`, out scaled by the description's residual scale. */
  #residual(h: string, out: string): string {
    const { b, cfg } = this;
    const factor = cfg.residualScale ?? 1;
    const scaled = factor === 1 ? out : b.op("Mul", [out, b.floats([factor], [])]);
    return b.op("Add", [h, scaled]);
  }

  #tables(rotary: RotarySpec): { cos: string; sin: string } {
    let tables = this.#ropeTables.get(rotary);
    if (!tables) {
      const { invFreq, attentionFactor } = rotary;
      tables = ropeTables(this.b, this.context.positions, invFreq, attentionFactor);
      this.#ropeTables.set(rotary, tables);
    }
    return tables;
  }
}
