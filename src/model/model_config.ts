/**
 * The normalised description of a decoder that every part of rft reads: graph builders, the f64
 * reference, parameter specs, KV caches, LoRA targets and the ONNX export. `hf_config.ts` makes
 * one from a Hugging Face `config.json` through the family table (`families.ts`), once, at load;
 * nothing downstream asks which family a model is, only what the description says. Types and
 * the few derived values only: no parsing here.
 */

import type { RopeScaling } from "./rope_scaling.ts";

/** A normalisation: RMSNorm or LayerNorm (with bias), its eps, and a constant added to weights. */
export interface NormSpec {
  kind: "rms_norm" | "layer_norm";
  eps: number;
  /** Added to the stored weight before it scales (Gemma's `1 + weight`); 0 for most families. */
  weightOffset: number;
}

/** The attention kinds of HF's `layer_types`. */
export type AttentionKind = "full_attention" | "sliding_attention";

/** Rotary position embedding of one attention kind. */
export interface RotarySpec {
  /** `rope_theta` of the kind (Gemma 3's sliding layers: `rope_local_base_freq`). */
  theta: number;
  /** HF's `rope_scaling` / `rope_parameters` variant (`rope_scaling.ts`). */
  scaling: RopeScaling;
  /**
   * Dims of each head that rotate: the first `rotaryDim` (HF's `head_dim * partial_rotary_factor`;
   * headDim for most families); the rest pass through unrotated.
   */
  rotaryDim: number;
  /** HF's f32 inverse frequencies of the variant, [rotaryDim / 2]. */
  invFreq: Float32Array<ArrayBuffer>;
  /**
   * Factor of cos and sin (the attention factor of yarn and longrope; 1 otherwise): where whole
   * heads rotate, scores scale by its square.
   */
  attentionFactor: number;
}

/** What one layer's attention does besides the shared shapes. */
export interface LayerAttentionSpec {
  kind: AttentionKind;
  /** Keys `window` or more positions before the query are not attended (HF's sliding_window). */
  window?: number;
  /** RoPE of q and k; absent where positions are learned embeddings (GPT-2). */
  rotary?: RotarySpec;
}

/** The q, k, v projections as three modules or one fused module (q, k, v rows in that order). */
export type QkvModules = { q: string; k: string; v: string } | { fused: string };

/**
 * The MLP's input projections: gate and up (gated), one fused gate_up (gated, gate rows first)
 * or one plain fc (ungated).
 */
export type MlpInModules = { gate: string; up: string } | { gateUp: string } | { fc: string };

/**
 * HF parameter names. Module names are relative to a layer's `layerPrefix` and name no
 * `.weight` / `.bias`; a norm absent from a family is undefined.
 */
export interface WeightNames {
  /** Token embedding `[vocab, hidden]`. */
  embedding: string;
  /** Learned absolute position embedding `[maxPositions, hidden]` (GPT-2). */
  positionEmbedding?: string;
  /** Prefix of layer `l`'s modules, `{l}` standing for the index. */
  layerPrefix: string;
  preAttentionNorm?: string;
  /** Applied to the attention's output before the residual addition (Gemma 2/3, OLMo 2). */
  postAttentionNorm?: string;
  qkv: QkvModules;
  /** Per-head RMSNorm of q and k before RoPE (Qwen3, Gemma 3). */
  qNorm?: string;
  kNorm?: string;
  attentionOut: string;
  preMlpNorm?: string;
  mlpIn: MlpInModules;
  mlpOut: string;
  /** Applied to the MLP's output before the residual addition. */
  postMlpNorm?: string;
  finalNorm: string;
  /** The untied LM head's weight. */
  lmHead: string;
  /** Weights stored [in, out] (GPT-2's Conv1D) instead of nn.Linear's [out, in]. */
  conv1d: boolean;
}

/** Which linear modules carry a bias. */
export interface BiasSpec {
  qkv: boolean;
  attentionOut: boolean;
  mlp: boolean;
}

/** A decoder as rft builds it (see the file comment). */
export interface ModelConfig {
  /** HF's `model_type`: the row of the family table (`families.ts`) that read it. */
  modelType: string;
  hiddenSize: number;
  intermediateSize: number;
  numLayers: number;
  numHeads: number;
  /** Key/value heads (grouped-query attention); numHeads where a family has no GQA. */
  numKvHeads: number;
  /** Head size, independent of hiddenSize / numHeads where a config says so (`head_dim`). */
  headDim: number;
  vocabSize: number;
  maxPositions: number;
  tieWordEmbeddings: boolean;
  bosTokenId: number | undefined;
  /** Every token id that ends generation (`eos_token_id` may be a list). */
  eosTokenIds: number[];
  padTokenId: number | undefined;
  /** Every norm of the model (per layer, q/k and final). */
  norm: NormSpec;
  bias: BiasSpec;
  /** The MLP's activation: f(gate) * up when gated, f(fc) otherwise (`unary.ts` names). */
  activation: "silu" | "gelu";
  /** Token embeddings are multiplied by this (Gemma: sqrt(hidden) in the embedding dtype). */
  embeddingScale: number;
  /** Factor of q.k before the softmax (1 / sqrt(headDim), Gemma's query_pre_attn_scalar^-0.5). */
  attentionScale: number;
  /** Attention scores pass through cap * tanh(score / cap) (Gemma 2's `attn_logit_softcapping`). */
  attentionSoftcap?: number;
  /** Logits of the LM head pass through cap * tanh(logits / cap) (`final_logit_softcapping`). */
  finalLogitSoftcap?: number;
  /**
   * Each block's output (attention, MLP) joins the residual stream multiplied by this (Granite's
   * `residual_multiplier`); 1 when absent.
   */
  residualScale?: number;
  /** The LM head's logits are multiplied by this (Granite: 1 / `logits_scaling`); 1 when absent. */
  logitScale?: number;
  /** Each layer's attention, in layer order. */
  layers: LayerAttentionSpec[];
  /**
   * Where the q/k norms (`names.qNorm`, `kNorm`) normalise: each head's vector (Qwen3, Gemma 3;
   * the default) or the whole projection (OLMo 2).
   */
  qkNormScope?: "head" | "projection";
  names: WeightNames;
}

/** The prefix of layer `l`'s modules (`model.layers.3.`). */
export function layerPrefix(cfg: ModelConfig, l: number): string {
  return cfg.names.layerPrefix.replace("{l}", String(l));
}

/** Key/value heads, head size and layers of a model's KV cache (generation and export). */
export interface KvLayout {
  layers: number;
  kvHeads: number;
  headDim: number;
}

/** The KV-cache layout of `cfg`. */
export function kvLayout(cfg: ModelConfig): KvLayout {
  return { layers: cfg.numLayers, kvHeads: cfg.numKvHeads, headDim: cfg.headDim };
}
