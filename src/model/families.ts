/**
 * The family table: every Hugging Face `model_type` rft runs, each a row that reads its
 * `config.json` keys (with transformers' defaults for that model_type) into the normalised
 * {@link ModelConfig} the builders, caches, exporters and LoRA read. A family differs from another
 * here, in its row's data (weight names, norms, biases, activation, attention kinds), and nowhere
 * else. Adding a family is adding a row (ARCHITECTURE.md, "How to add a model family").
 */

import { ConfigKeys, isRecord, isTokenId, oneOfText } from "./config_keys.ts";
import type {
  AttentionKind,
  BiasSpec,
  LayerAttentionSpec,
  ModelConfig,
  NormSpec,
  RotarySpec,
  WeightNames,
} from "./model_config.ts";
import { readRopeScaling, ropeFrequencies, type RopeScaling } from "./rope_scaling.ts";

/** One row of the table: the architectures it covers and how its config.json reads. */
export interface Family {
  /** HF `architectures` entries of this model_type (read when a config has no model_type). */
  architectures: readonly string[];
  /** Reads a config of this model_type (checked, defaults filled) into the description. */
  read(keys: ConfigKeys, modelType: string): ModelConfig;
}

/** HF activation names rft computes, as the unary functions of `src/ops/unary.ts`. */
const ACTIVATIONS: Readonly<Record<string, ModelConfig["activation"]>> = {
  silu: "silu",
  swish: "silu",
  gelu_new: "gelu",
  gelu_pytorch_tanh: "gelu",
  gelu_fast: "gelu",
};

/** Weight names of the Llama layout (llama, mistral, qwen2). */
const LLAMA_NAMES: WeightNames = {
  embedding: "model.embed_tokens.weight",
  layerPrefix: "model.layers.{l}.",
  preAttentionNorm: "input_layernorm",
  qkv: { q: "self_attn.q_proj", k: "self_attn.k_proj", v: "self_attn.v_proj" },
  attentionOut: "self_attn.o_proj",
  preMlpNorm: "post_attention_layernorm",
  mlpIn: { gate: "mlp.gate_proj", up: "mlp.up_proj" },
  mlpOut: "mlp.down_proj",
  finalNorm: "model.norm",
  lmHead: "lm_head.weight",
  conv1d: false,
};

/** The Llama layout with per-head q/k norms (qwen3). */
const QK_NORM_NAMES: WeightNames = {
  ...LLAMA_NAMES,
  qNorm: "self_attn.q_norm",
  kNorm: "self_attn.k_norm",
};

/** Gemma 2's: four norms per layer (pre and post attention, pre and post MLP). */
const GEMMA2_NAMES: WeightNames = {
  ...LLAMA_NAMES,
  postAttentionNorm: "post_attention_layernorm",
  preMlpNorm: "pre_feedforward_layernorm",
  postMlpNorm: "post_feedforward_layernorm",
};

/** Gemma 3's: Gemma 2's with q/k norms. */
const GEMMA3_NAMES: WeightNames = {
  ...GEMMA2_NAMES,
  qNorm: QK_NORM_NAMES.qNorm,
  kNorm: QK_NORM_NAMES.kNorm,
};

/** Phi-3's: the Llama layout with fused qkv and gate_up projections. */
const PHI3_NAMES: WeightNames = {
  ...LLAMA_NAMES,
  qkv: { fused: "self_attn.qkv_proj" },
  mlpIn: { gateUp: "mlp.gate_up_proj" },
};

/** OLMo 2's: norms after attention and MLP only (none before), q/k norms over whole projections. */
const OLMO2_NAMES: WeightNames = {
  ...QK_NORM_NAMES,
  preAttentionNorm: undefined,
  postAttentionNorm: "post_attention_layernorm",
  preMlpNorm: undefined,
  postMlpNorm: "post_feedforward_layernorm",
};

const GPT2_NAMES: WeightNames = {
  embedding: "transformer.wte.weight",
  positionEmbedding: "transformer.wpe.weight",
  layerPrefix: "transformer.h.{l}.",
  preAttentionNorm: "ln_1",
  qkv: { fused: "attn.c_attn" },
  attentionOut: "attn.c_proj",
  preMlpNorm: "ln_2",
  mlpIn: { fc: "mlp.c_fc" },
  mlpOut: "mlp.c_proj",
  finalNorm: "transformer.ln_f",
  lmHead: "lm_head.weight",
  conv1d: true,
};

/** What Llama-layout rows differ in. */
interface LlamaRow {
  architectures: readonly string[];
  /** transformers' `max_position_embeddings` default of the model_type. */
  maxPositions: number;
  /** q/k/v and o_proj biases from the config (Llama's `attention_bias`, Qwen2's fixed q/k/v). */
  bias: (keys: ConfigKeys) => Omit<BiasSpec, "mlp">;
  /** The model_type reads `mlp_bias` (default false; others have no MLP biases). */
  readsMlpBias?: boolean;
  names: WeightNames;
  /** The norms where they differ from RMSNorms of `rms_norm_eps`, default 1e-6, no offset. */
  norm?: Partial<NormRow>;
  /** transformers' `tie_word_embeddings` default of the model_type (false unless given). */
  tieDefault?: boolean;
  /** transformers' `rope_theta` default of the model_type (10000 unless given). */
  thetaDefault?: number;
  /** q/k norms per head (Qwen3) or over the whole projection (OLMo 2); default per head. */
  qkNormScope?: ModelConfig["qkNormScope"];
  /** Each layer's sliding window from the config (default: none). */
  windows?: (keys: ConfigKeys, numLayers: number) => (number | undefined)[];
  /** Whether each layer rotates q and k (default: all; SmolLM3's NoPE layers do not). */
  ropeLayers?: (keys: ConfigKeys, numLayers: number) => boolean[];
  /** Scales of embeddings, scores, residual branches and logits besides the defaults (Granite). */
  scales?: (keys: ConfigKeys) => Partial<Pick<ModelConfig, ScaleKey>>;
  /** Refuses, in one line, a config key whose variant rft does not build. */
  refuse?: (keys: ConfigKeys) => void;
  /** transformers' `head_dim` default of the model_type (hidden / heads unless given). */
  headDim?: number;
  /** The MLP's activation where it is not `hidden_act`'s (default silu). */
  activation?: (keys: ConfigKeys) => ModelConfig["activation"];
}

/** A row's norms: kind, the key of their eps with transformers' default, weight offset. */
interface NormRow {
  kind: NormSpec["kind"];
  epsKey: string;
  eps: number;
  weightOffset: number;
}

/** The norms of most rows: RMSNorms of `rms_norm_eps` (1e-6 by default), weights as stored. */
const RMS_NORM: NormRow = { kind: "rms_norm", epsKey: "rms_norm_eps", eps: 1e-6, weightOffset: 0 };

/** The description's scale factors. */
type ScaleKey = "embeddingScale" | "attentionScale" | "residualScale" | "logitScale";

/** Mistral's and Phi-3's `sliding_window` (the model_type's default when absent): every layer. */
const everyLayerWindow =
  (fallback: number | null) => (keys: ConfigKeys, numLayers: number): (number | undefined)[] => {
    const window = keys.get("sliding_window") === undefined
      ? fallback
      : keys.has("sliding_window")
      ? keys.positiveInt("sliding_window")
      : null;
    return new Array(numLayers).fill(window ?? undefined);
  };

/**
 * Qwen2's and Qwen3's windows: with `use_sliding_window`, `sliding_window` on the sliding layers
 * of `layer_types`, or (without it) on the layers from `max_window_layers` on, as transformers
 * derives them; else none.
 */
function qwenWindows(keys: ConfigKeys, numLayers: number): (number | undefined)[] {
  if (!keys.boolean("use_sliding_window", false)) return new Array(numLayers).fill(undefined);
  const window = keys.positiveInt("sliding_window", 4096);
  const first = keys.has("max_window_layers") ? keys.positiveInt("max_window_layers") : 28;
  const kinds = listedLayerKinds(keys, numLayers) ??
    Array.from(
      { length: numLayers },
      (_, l) => l >= first ? "sliding_attention" : "full_attention",
    );
  return kinds.map((kind) => (kind === "sliding_attention" ? window : undefined));
}

/** Llama's RoPE keys: `rope_theta` (10000 by default) and `rope_scaling`. */
const LLAMA_ROPE: LegacyRope = {
  thetaKey: "rope_theta",
  thetaDefault: 10000,
  scalingKey: "rope_scaling",
};

/**
 * Gemma 3's RoPE keys per kind: the global layers' `rope_theta` and `rope_scaling`, the local
 * ones' own base.
 */
const GEMMA3_ROPE: Readonly<Record<AttentionKind, LegacyRope>> = {
  full_attention: { thetaKey: "rope_theta", thetaDefault: 1e6, scalingKey: "rope_scaling" },
  sliding_attention: { thetaKey: "rope_local_base_freq", thetaDefault: 10000 },
};

/** Llama's biases: `attention_bias` on q, k, v and o_proj. */
const attentionBiases = (on: boolean): BiasSpec => ({ qkv: on, attentionOut: on, mlp: false });

/** The biases of rows that read `attention_bias` (default false). */
const readAttentionBias = (keys: ConfigKeys) =>
  attentionBiases(keys.boolean("attention_bias", false));

/** The biases of rows without any. */
const noBiases = () => attentionBiases(false);

/**
 * SmolLM3's RoPE layers: `no_rope_layers` (1: RoPE, 0: NoPE), or every `no_rope_layer_interval`-th
 * layer (default 4) without RoPE, as transformers derives it.
 */
function smolLm3RopeLayers(keys: ConfigKeys, numLayers: number): boolean[] {
  const listed = keys.get("no_rope_layers");
  if (listed === undefined || listed === null) {
    const interval = keys.positiveInt("no_rope_layer_interval", 4);
    return Array.from({ length: numLayers }, (_, l) => (l + 1) % interval !== 0);
  }
  if (
    !Array.isArray(listed) || listed.length < numLayers || !listed.every((f) => f === 0 || f === 1)
  ) {
    keys.fail(
      "no_rope_layers",
      listed,
      `${numLayers} or more entries (num_hidden_layers), each 0 or 1`,
    );
  }
  return listed.slice(0, numLayers).map((flag) => flag === 1);
}

/**
 * SmolLM3's windows: `sliding_window` on the sliding layers of `layer_types`, or (with
 * `use_sliding_window`) on its NoPE layers, as transformers derives them; else none.
 */
function smolLm3Windows(keys: ConfigKeys, numLayers: number): (number | undefined)[] {
  const window = keys.has("sliding_window") ? keys.positiveInt("sliding_window") : undefined;
  const ropeLayers = smolLm3RopeLayers(keys, numLayers);
  const kinds = listedLayerKinds(keys, numLayers) ??
    ropeLayers.map((rotates) =>
      keys.boolean("use_sliding_window", false) && window !== undefined && !rotates
        ? "sliding_attention"
        : "full_attention"
    );
  return kinds.map((kind) => (kind === "sliding_attention" ? window : undefined));
}

/** Granite's multipliers of embeddings, scores and residual branches, and its logits divisor. */
function graniteScales(keys: ConfigKeys): Partial<Pick<ModelConfig, ScaleKey>> {
  return {
    embeddingScale: keys.positiveNumber("embedding_multiplier", 1),
    attentionScale: keys.positiveNumber("attention_multiplier", 1),
    residualScale: keys.positiveNumber("residual_multiplier", 1),
    logitScale: 1 / keys.positiveNumber("logits_scaling", 1),
  };
}

/**
 * Gemma's (1) MLP activation: `hidden_activation`, or GELU's tanh form where it is absent or null
 * (transformers ignores `hidden_act` there, whose "gelu" the first checkpoints ship).
 */
function gemmaActivation(keys: ConfigKeys): ModelConfig["activation"] {
  return keys.has("hidden_activation")
    ? activation(keys, "hidden_activation", "gelu_pytorch_tanh")
    : "gelu";
}

/** Gemma's (1) embeddings, scaled by sqrt(hidden) rounded to the checkpoint's dtype. */
function gemmaScales(keys: ConfigKeys): Partial<Pick<ModelConfig, ScaleKey>> {
  const scale = Math.sqrt(keys.positiveInt("hidden_size"));
  return { embeddingScale: roundToDtype(scale, checkpointDtype(keys)) };
}

/** StableLM's variants rft does not build, each refused in one line. */
function refuseStableLmVariants(keys: ConfigKeys): void {
  if (keys.boolean("qk_layernorm", false)) {
    keys.fail("qk_layernorm", true, "false (rft has no per-head LayerNorms of q and k)");
  }
  if (keys.boolean("use_parallel_residual", false)) {
    keys.fail("use_parallel_residual", true, "false (rft runs attention and MLP in sequence)");
  }
}

/** The table (see the file comment). */
export const FAMILIES: Readonly<Record<string, Family>> = {
  llama: llamaFamily({
    architectures: ["LlamaForCausalLM"],
    maxPositions: 2048,
    bias: readAttentionBias,
    readsMlpBias: true,
    names: LLAMA_NAMES,
  }),
  mistral: llamaFamily({
    architectures: ["MistralForCausalLM"],
    maxPositions: 4096 * 32,
    bias: noBiases,
    names: LLAMA_NAMES,
    windows: everyLayerWindow(4096),
  }),
  qwen2: llamaFamily({
    architectures: ["Qwen2ForCausalLM"],
    maxPositions: 32768,
    bias: () => ({ qkv: true, attentionOut: false }),
    names: LLAMA_NAMES,
    windows: qwenWindows,
  }),
  qwen3: llamaFamily({
    architectures: ["Qwen3ForCausalLM"],
    maxPositions: 32768,
    bias: readAttentionBias,
    names: QK_NORM_NAMES,
    windows: qwenWindows,
  }),
  phi3: llamaFamily({
    architectures: ["Phi3ForCausalLM"],
    maxPositions: 4096,
    bias: noBiases,
    names: PHI3_NAMES,
    norm: { eps: 1e-5 },
    windows: everyLayerWindow(null),
  }),
  olmo2: llamaFamily({
    architectures: ["Olmo2ForCausalLM"],
    maxPositions: 2048,
    bias: readAttentionBias,
    names: OLMO2_NAMES,
    norm: { eps: 1e-5 },
    qkNormScope: "projection",
  }),
  smollm3: llamaFamily({
    architectures: ["SmolLM3ForCausalLM"],
    maxPositions: 32768,
    bias: readAttentionBias,
    readsMlpBias: true,
    names: LLAMA_NAMES,
    tieDefault: true,
    thetaDefault: 2e6,
    windows: smolLm3Windows,
    ropeLayers: smolLm3RopeLayers,
  }),
  granite: llamaFamily({
    architectures: ["GraniteForCausalLM"],
    maxPositions: 2048,
    bias: readAttentionBias,
    readsMlpBias: true,
    names: LLAMA_NAMES,
    scales: graniteScales,
  }),
  stablelm: llamaFamily({
    architectures: ["StableLmForCausalLM"],
    maxPositions: 4096,
    bias: (keys) => ({ qkv: keys.boolean("use_qkv_bias", false), attentionOut: false }),
    names: LLAMA_NAMES,
    norm: { kind: "layer_norm", epsKey: "layer_norm_eps", eps: 1e-5 },
    refuse: refuseStableLmVariants,
  }),
  gpt2: { architectures: ["GPT2LMHeadModel", "GPT2Model"], read: gpt2Config },
  gemma: llamaFamily({
    architectures: ["GemmaForCausalLM"],
    maxPositions: 8192,
    bias: readAttentionBias,
    names: LLAMA_NAMES,
    norm: { weightOffset: 1 },
    tieDefault: true,
    headDim: 256,
    activation: gemmaActivation,
    scales: gemmaScales,
  }),
  gemma2: gemmaFamily({
    architectures: ["Gemma2ForCausalLM"],
    maxPositions: 8192,
    names: GEMMA2_NAMES,
    rope: { full_attention: LLAMA_ROPE, sliding_attention: LLAMA_ROPE },
    derivedKinds: gemma2Kinds,
  }),
  gemma3_text: gemmaFamily({
    architectures: ["Gemma3ForCausalLM"],
    maxPositions: 131072,
    names: GEMMA3_NAMES,
    rope: GEMMA3_ROPE,
    derivedKinds: gemma3Kinds,
  }),
};

/** model_types of vision-language models, with the text model to use instead. */
const NOT_TEXT_MODELS: Readonly<Record<string, string>> = {
  gemma3:
    "a text model (this is Gemma 3's vision-language Gemma3ForConditionalGeneration, whose weights rft does not read): use a gemma3_text checkpoint (Gemma3ForCausalLM: gemma-3-270m, gemma-3-1b)",
};

/** Every model_type rft can load. */
export const SUPPORTED_MODEL_TYPES: readonly string[] = Object.keys(FAMILIES);

/**
 * The normalised description of parsed config JSON (`file` names it in errors): the row of its
 * `model_type` (or, without one, of its `architectures`) reads it. An unknown model_type is one
 * InputError naming the file, the key and the supported ones.
 */
export function describeModel(json: unknown, file: string): ModelConfig {
  const keys = new ConfigKeys(json, file);
  const modelType = keys.has("model_type") ? keys.string("model_type") : fromArchitectures(keys);
  const family = FAMILIES[modelType];
  if (family) return family.read(keys, modelType);
  const hint = NOT_TEXT_MODELS[modelType];
  return keys.fail("model_type", modelType, hint ?? oneOfText(SUPPORTED_MODEL_TYPES));
}

/** The model_type whose row lists the config's first architecture. */
function fromArchitectures(keys: ConfigKeys): string {
  const architectures = keys.get("architectures");
  const first = Array.isArray(architectures) ? architectures[0] : undefined;
  const found = Object.entries(FAMILIES).find(([, f]) => f.architectures.includes(first));
  return found ? found[0] : keys.oneOf("model_type", SUPPORTED_MODEL_TYPES);
}

/** A Llama-layout row (RMSNorm, rotary GQA attention, gated MLP). */
function llamaFamily(row: LlamaRow): Family {
  return {
    architectures: row.architectures,
    read(keys, modelType) {
      row.refuse?.(keys);
      const shape = decoderShape(keys, { maxPositions: row.maxPositions, headDim: row.headDim });
      const rope = { ...LLAMA_ROPE, thetaDefault: row.thetaDefault ?? LLAMA_ROPE.thetaDefault };
      const rotary = rotarySpec(keys, shape, rope, undefined, rotaryDim(keys, shape.headDim));
      return {
        modelType,
        ...shape,
        maxPositions: servedPositions(shape.maxPositions, rotary),
        tieWordEmbeddings: keys.boolean("tie_word_embeddings", row.tieDefault ?? false),
        ...tokenIds(keys),
        norm: readNorm(keys, { ...RMS_NORM, ...row.norm }),
        bias: {
          ...row.bias(keys),
          mlp: row.readsMlpBias ? keys.boolean("mlp_bias", false) : false,
        },
        activation: row.activation?.(keys) ?? activation(keys, "hidden_act", "silu"),
        embeddingScale: 1,
        attentionScale: 1 / Math.sqrt(shape.headDim),
        ...row.scales?.(keys),
        layers: llamaLayers(keys, row, shape.numLayers, rotary),
        names: row.names,
        ...(row.qkNormScope ? { qkNormScope: row.qkNormScope } : {}),
      };
    },
  };
}

/** The norm spec of `row`'s keys. */
function readNorm(keys: ConfigKeys, row: NormRow): NormSpec {
  return {
    kind: row.kind,
    eps: keys.positiveNumber(row.epsKey, row.eps),
    weightOffset: row.weightOffset,
  };
}

/** Each layer's attention in a Llama-layout row: its window and, unless NoPE, its RoPE. */
function llamaLayers(
  keys: ConfigKeys,
  row: LlamaRow,
  numLayers: number,
  rotary: RotarySpec,
): LayerAttentionSpec[] {
  const windows = row.windows?.(keys, numLayers) ?? [];
  const ropeLayers = row.ropeLayers?.(keys, numLayers);
  return Array.from({ length: numLayers }, (_, l) => {
    const window = windows[l];
    const rope = ropeLayers?.[l] === false ? {} : { rotary };
    return window === undefined
      ? { kind: "full_attention", ...rope }
      : { kind: "sliding_attention", ...rope, window };
  });
}

/**
 * The rotated dims of a head: `head_dim * partial_rotary_factor` (top level, or transformers
 * v5's `rope_parameters`), rounded down as transformers does; even and at least 2.
 */
function rotaryDim(keys: ConfigKeys, headDim: number): number {
  const params = keys.get("rope_parameters");
  const nested = isRecord(params) && params.partial_rotary_factor !== undefined;
  const key = nested ? "rope_parameters.partial_rotary_factor" : "partial_rotary_factor";
  const factor = nested ? params.partial_rotary_factor : keys.get("partial_rotary_factor") ?? 1;
  const dim = typeof factor === "number" && factor > 0 && factor <= 1
    ? Math.floor(headDim * factor)
    : NaN;
  if (!(dim >= 2 && dim % 2 === 0)) {
    keys.fail(key, factor, `a number in (0, 1] giving an even count >= 2 of head_dim ${headDim}`);
  }
  return dim;
}

/**
 * The positions rft serves: the config's, or longrope's original length, within which HF uses
 * its short factors (past it HF re-rotates every position with the long ones).
 */
function servedPositions(maxPositions: number, rotary: RotarySpec): number {
  const { scaling } = rotary;
  return scaling.type === "longrope"
    ? Math.min(maxPositions, scaling.originalMaxPositions)
    : maxPositions;
}

/** GPT-2: LayerNorm, learned positions, fused qkv Conv1D, tanh GELU MLP, all with biases. */
function gpt2Config(keys: ConfigKeys, modelType: string): ModelConfig {
  const hiddenSize = keys.positiveInt("n_embd");
  const numHeads = keys.positiveInt("n_head");
  if (hiddenSize % numHeads !== 0) {
    keys.fail("n_embd", hiddenSize, `a multiple of n_head (${numHeads})`);
  }
  const numLayers = keys.positiveInt("n_layer");
  const headDim = hiddenSize / numHeads;
  const norm: NormSpec = {
    kind: "layer_norm",
    eps: keys.positiveNumber("layer_norm_epsilon", 1e-5),
    weightOffset: 0,
  };
  return {
    modelType,
    hiddenSize,
    intermediateSize: keys.positiveInt("n_inner", 4 * hiddenSize),
    numLayers,
    numHeads,
    numKvHeads: numHeads,
    headDim,
    vocabSize: keys.positiveInt("vocab_size"),
    maxPositions: keys.positiveInt("n_positions"),
    tieWordEmbeddings: keys.boolean("tie_word_embeddings", true),
    ...tokenIds(keys),
    norm,
    bias: { qkv: true, attentionOut: true, mlp: true },
    activation: activation(keys, "activation_function", "gelu_new"),
    embeddingScale: 1,
    attentionScale: 1 / Math.sqrt(headDim),
    layers: uniformLayers(numLayers, { kind: "full_attention" }),
    names: GPT2_NAMES,
  };
}

/** What the Gemma rows (Gemma 2, Gemma 3's text model) differ in. */
interface GemmaRow {
  architectures: readonly string[];
  /** transformers' `max_position_embeddings` default of the model_type. */
  maxPositions: number;
  names: WeightNames;
  /** Where each attention kind keeps its RoPE base and variant. */
  rope: Readonly<Record<AttentionKind, LegacyRope>>;
  /** Each layer's attention kind when the config has no `layer_types`. */
  derivedKinds: (keys: ConfigKeys, numLayers: number) => AttentionKind[];
}

/**
 * A Gemma row: RMSNorm scaling by 1 + weight, four norms per layer (and Gemma 3's q/k norms),
 * embeddings scaled by sqrt(hidden) in the checkpoint's dtype, a GELU-tanh gated MLP, scores
 * scaled by query_pre_attn_scalar^-0.5, sliding-window layers beside full-attention ones as
 * `layer_types` (or the row's derivation) says, each kind with its RoPE, scores soft-capped by
 * `attn_logit_softcapping` (Gemma 2's 50) and logits by `final_logit_softcapping`.
 */
function gemmaFamily(row: GemmaRow): Family {
  return {
    architectures: row.architectures,
    read(keys, modelType) {
      const shape = decoderShape(keys, {
        maxPositions: row.maxPositions,
        headDim: 256,
        numKvHeads: 4,
      });
      if (keys.boolean("use_bidirectional_attention", false)) {
        keys.fail("use_bidirectional_attention", true, "false (rft runs causal decoders)");
      }
      const window = keys.positiveInt("sliding_window", 4096);
      const rotary = {
        full_attention: rotarySpec(keys, shape, row.rope.full_attention, "full_attention"),
        sliding_attention: rotarySpec(keys, shape, row.rope.sliding_attention, "sliding_attention"),
      };
      const kinds = listedLayerKinds(keys, shape.numLayers) ??
        row.derivedKinds(keys, shape.numLayers);
      return {
        modelType,
        ...shape,
        tieWordEmbeddings: keys.boolean("tie_word_embeddings", true),
        ...tokenIds(keys, { pad: 0, eos: 1, bos: 2 }),
        norm: { kind: "rms_norm", eps: keys.positiveNumber("rms_norm_eps", 1e-6), weightOffset: 1 },
        bias: attentionBiases(keys.boolean("attention_bias", false)),
        activation: activation(keys, "hidden_activation", "gelu_pytorch_tanh"),
        embeddingScale: roundToDtype(Math.sqrt(shape.hiddenSize), checkpointDtype(keys)),
        attentionScale: keys.positiveNumber("query_pre_attn_scalar", 256) ** -0.5,
        attentionSoftcap: keys.optionalPositiveNumber("attn_logit_softcapping"),
        finalLogitSoftcap: keys.optionalPositiveNumber("final_logit_softcapping"),
        layers: kinds.map((kind) => ({
          kind,
          rotary: rotary[kind],
          ...(kind === "sliding_attention" ? { window } : {}),
        })),
        names: row.names,
      };
    },
  };
}

/**
 * Gemma 3's attention kinds without `layer_types`: from `sliding_window_pattern` p (default 6)
 * every p-th layer full and the others sliding, as transformers derives it.
 */
function gemma3Kinds(keys: ConfigKeys, numLayers: number): AttentionKind[] {
  const pattern = keys.positiveInt("sliding_window_pattern", 6);
  return Array.from(
    { length: numLayers },
    (_, l) => (l + 1) % pattern === 0 ? "full_attention" : "sliding_attention",
  );
}

/** Gemma 2's attention kinds without `layer_types`: sliding and full in turn, sliding first. */
function gemma2Kinds(_keys: ConfigKeys, numLayers: number): AttentionKind[] {
  return Array.from(
    { length: numLayers },
    (_, l) => l % 2 === 0 ? "sliding_attention" : "full_attention",
  );
}

/** The config's `layer_types` (checked: one of HF's kinds per layer), or undefined without one. */
function listedLayerKinds(keys: ConfigKeys, numLayers: number): AttentionKind[] | undefined {
  const kinds: readonly AttentionKind[] = ["full_attention", "sliding_attention"];
  const types = keys.get("layer_types");
  if (types === undefined || types === null) return undefined;
  if (
    !Array.isArray(types) || types.length !== numLayers ||
    !types.every((t) => kinds.includes(t))
  ) {
    keys.fail(
      "layer_types",
      types,
      `${numLayers} entries (num_hidden_layers), each ${oneOfText(kinds)}`,
    );
  }
  return types as AttentionKind[];
}

/** The dtype a config says its weights are stored in (`torch_dtype`, v5's `dtype`). */
function checkpointDtype(keys: ConfigKeys): string {
  const dtype = keys.get("torch_dtype") ?? keys.get("dtype");
  return typeof dtype === "string" ? dtype : "float32";
}

/**
 * `x` rounded to `dtype` (bfloat16, float16; f32 otherwise), as HF's `embed_scale.to(dtype)`:
 * Gemma's sqrt(hidden) is a bfloat16 in the checkpoints it ships (sqrt(640) ~ 25.298 -> 25.25).
 */
function roundToDtype(x: number, dtype: string): number {
  if (dtype === "float16") return Math.f16round(x);
  if (dtype !== "bfloat16") return Math.fround(x);
  const bits = new Uint32Array(Float32Array.of(x).buffer)[0];
  // Round to nearest even on the 16 dropped bits.
  const rounded = (bits + 0x7fff + ((bits >>> 16) & 1)) & 0xffff0000;
  return new Float32Array(Uint32Array.of(rounded >>> 0).buffer)[0];
}

/** The sizes every rotary decoder's config spells the same way. */
type DecoderShape = Pick<
  ModelConfig,
  | "hiddenSize"
  | "intermediateSize"
  | "numLayers"
  | "numHeads"
  | "numKvHeads"
  | "headDim"
  | "vocabSize"
  | "maxPositions"
>;

/** Reads hidden/intermediate sizes, layers, heads, KV heads, head_dim, vocab and positions. */
function decoderShape(
  keys: ConfigKeys,
  defaults: { maxPositions: number; headDim?: number; numKvHeads?: number },
): DecoderShape {
  const hiddenSize = keys.positiveInt("hidden_size");
  const numHeads = keys.positiveInt("num_attention_heads");
  const numKvHeads = keys.positiveInt("num_key_value_heads", defaults.numKvHeads ?? numHeads);
  if (numHeads % numKvHeads !== 0) {
    keys.fail("num_key_value_heads", numKvHeads, `a divisor of num_attention_heads (${numHeads})`);
  }
  const derivedHeadDim = defaults.headDim ?? hiddenSize / numHeads;
  if (!keys.has("head_dim") && !Number.isInteger(derivedHeadDim)) {
    keys.fail("hidden_size", hiddenSize, `a multiple of num_attention_heads (${numHeads})`);
  }
  const headDim = keys.positiveInt("head_dim", derivedHeadDim);
  if (headDim % 2 !== 0) keys.fail("head_dim", headDim, "an even number (RoPE rotates pairs)");
  return {
    hiddenSize,
    intermediateSize: keys.positiveInt("intermediate_size"),
    numLayers: keys.positiveInt("num_hidden_layers"),
    numHeads,
    numKvHeads,
    headDim,
    vocabSize: keys.positiveInt("vocab_size"),
    maxPositions: keys.positiveInt("max_position_embeddings", defaults.maxPositions),
  };
}

/** Where a config keeps one attention kind's RoPE base and variant before `rope_parameters`. */
interface LegacyRope {
  thetaKey: string;
  thetaDefault: number;
  /** The variant's key (`rope_scaling`), or none where the kind always has the default. */
  scalingKey?: string;
}

/**
 * The rotary embedding of an attention kind for heads of `shape.headDim`: from transformers v5's
 * `rope_parameters` (one object, or one per kind, `kind` naming it), else from the `legacy` keys
 * (`rope_theta`, `rope_scaling`: null is the default RoPE).
 */
function rotarySpec(
  keys: ConfigKeys,
  shape: DecoderShape,
  legacy: LegacyRope,
  kind?: AttentionKind,
  dims = shape.headDim,
): RotarySpec {
  const params = keys.get("rope_parameters");
  if (isRecord(params)) {
    const perKind = kind !== undefined && isRecord(params[kind]);
    const key = perKind ? `rope_parameters.${kind}` : "rope_parameters";
    const own = (perKind ? params[kind] : params) as Record<string, unknown>;
    const theta = own.rope_theta ?? legacy.thetaDefault;
    if (typeof theta !== "number" || !(theta > 0)) {
      keys.fail(`${key}.rope_theta`, theta, "a positive number");
    }
    return rotary(keys, key, theta, readRopeScaling(keys, key, own, shape.maxPositions), dims);
  }
  const theta = keys.positiveNumber(legacy.thetaKey, legacy.thetaDefault);
  const key = legacy.scalingKey ?? "";
  const raw = legacy.scalingKey ? keys.get(legacy.scalingKey) : null;
  return rotary(keys, key, theta, readRopeScaling(keys, key, raw, shape.maxPositions), dims);
}

/**
 * The rotary spec of base `theta` and variant `scaling` (read from `key`) over the first
 * `dims` dims of each head, with its f32 tables; longrope's factor lists are checked to hold one
 * factor per rotated pair.
 */
function rotary(
  keys: ConfigKeys,
  key: string,
  theta: number,
  scaling: RopeScaling,
  dims: number,
): RotarySpec {
  if (scaling.type === "longrope") {
    for (
      const [name, list] of [["short_factor", scaling.shortFactor], [
        "long_factor",
        scaling.longFactor,
      ]] as const
    ) {
      if (list.length !== dims / 2) {
        keys.fail(
          `${key}.${name}`,
          `${list.length} factors`,
          `${dims / 2} (one per rotated pair of head dims)`,
        );
      }
    }
  }
  return { theta, scaling, rotaryDim: dims, ...ropeFrequencies(theta, scaling, dims) };
}

/** `count` layers with the same attention. */
function uniformLayers(count: number, spec: LayerAttentionSpec): LayerAttentionSpec[] {
  return Array.from({ length: count }, () => spec);
}

/** The activation named by `key` (`fallback` when absent). */
function activation(keys: ConfigKeys, key: string, fallback: string): ModelConfig["activation"] {
  return ACTIVATIONS[keys.oneOf(key, Object.keys(ACTIVATIONS), fallback)];
}

/** bos, eos (one id or a list) and pad token ids, with the model_type's defaults. */
function tokenIds(keys: ConfigKeys, defaults: { pad?: number; eos?: number; bos?: number } = {}) {
  const eos = keys.get("eos_token_id") ?? defaults.eos ?? [];
  const eosTokenIds = typeof eos === "number" ? [eos] : eos;
  if (!Array.isArray(eosTokenIds) || !eosTokenIds.every(isTokenId)) {
    keys.fail("eos_token_id", eos, "a token id or a list of token ids");
  }
  return {
    bosTokenId: keys.tokenId("bos_token_id") ?? defaults.bos,
    eosTokenIds: eosTokenIds as number[],
    padTokenId: keys.tokenId("pad_token_id") ?? defaults.pad,
  };
}
