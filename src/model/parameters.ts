/**
 * The parameters of a model under their Hugging Face names and shapes, in one list that loading
 * (validation), random init, sharding and saving all use, derived from the description's weight
 * names and sizes (`model_config.ts`): no family is named here. GPT-2 names carry the
 * `transformer.` prefix that `GPT2LMHeadModel.save_pretrained` writes; loading also accepts the
 * bare names of `GPT2Model` checkpoints.
 */

import { layerPrefix, type ModelConfig } from "./model_config.ts";

/** How a parameter is initialised when a model is created from scratch. */
export type InitKind = "normal" | "ones" | "zeros";

/** One parameter: HF name, shape, and how it starts in a fresh model. */
export interface ParameterSpec {
  name: string;
  shape: number[];
  init: InitKind;
  /**
   * A vocabulary-sized weight (token embedding, LM head) that may be stored in row shards when
   * one storage binding cannot hold it (`row_shards.ts`).
   */
  shardable?: boolean;
}

/** A linear module of a layer: its HF name (without `.weight`), sizes and bias. */
export interface LinearSpec {
  module: string;
  inDim: number;
  outDim: number;
  bias: boolean;
}

/** The linear modules of one layer by their place in it. */
export interface LayerLinears {
  /** q, k, v (or the one fused qkv module). */
  qkv: LinearSpec[];
  attentionOut: LinearSpec;
  /** gate and up, the fused gate_up, or the plain fc. */
  mlpIn: LinearSpec[];
  mlpOut: LinearSpec;
}

/** The linear modules of layer `l`. */
export function layerLinears(cfg: ModelConfig, l: number): LayerLinears {
  const p = layerPrefix(cfg, l);
  const { names, bias, hiddenSize: c, intermediateSize: ff } = cfg;
  const q = cfg.numHeads * cfg.headDim;
  const kv = cfg.numKvHeads * cfg.headDim;
  const linear = (module: string, inDim: number, outDim: number, on: boolean): LinearSpec => ({
    module: p + module,
    inDim,
    outDim,
    bias: on,
  });
  const qkv = "fused" in names.qkv ? [linear(names.qkv.fused, c, q + 2 * kv, bias.qkv)] : [
    linear(names.qkv.q, c, q, bias.qkv),
    linear(names.qkv.k, c, kv, bias.qkv),
    linear(names.qkv.v, c, kv, bias.qkv),
  ];
  const mlpIn = "fc" in names.mlpIn
    ? [linear(names.mlpIn.fc, c, ff, bias.mlp)]
    : "gateUp" in names.mlpIn
    ? [linear(names.mlpIn.gateUp, c, 2 * ff, bias.mlp)]
    : [linear(names.mlpIn.gate, c, ff, bias.mlp), linear(names.mlpIn.up, c, ff, bias.mlp)];
  return {
    qkv,
    attentionOut: linear(names.attentionOut, q, c, bias.attentionOut),
    mlpIn,
    mlpOut: linear(names.mlpOut, ff, c, bias.mlp),
  };
}

/** Every linear module of the model, layer by layer in parameter order (LoRA's targets). */
export function linearModules(cfg: ModelConfig): LinearSpec[] {
  return Array.from({ length: cfg.numLayers }, (_, l) => {
    const { qkv, attentionOut, mlpIn, mlpOut } = layerLinears(cfg, l);
    return [...qkv, attentionOut, ...mlpIn, mlpOut];
  }).flat();
}

/** Every parameter of a model with this config, in a stable order. */
export function parameterSpecs(cfg: ModelConfig): ParameterSpec[] {
  const { names, hiddenSize: c } = cfg;
  const specs: ParameterSpec[] = [
    { name: names.embedding, shape: [cfg.vocabSize, c], init: "normal", shardable: true },
  ];
  if (names.positionEmbedding) {
    specs.push({ name: names.positionEmbedding, shape: [cfg.maxPositions, c], init: "normal" });
  }
  for (let l = 0; l < cfg.numLayers; l++) specs.push(...layerSpecs(cfg, l));
  specs.push(...normSpecs(cfg, names.finalNorm, c));
  if (!cfg.tieWordEmbeddings) {
    specs.push({ name: names.lmHead, shape: [cfg.vocabSize, c], init: "normal", shardable: true });
  }
  return specs;
}

/** Layer `l`'s parameters: norms and linear modules in the order the layer applies them. */
function layerSpecs(cfg: ModelConfig, l: number): ParameterSpec[] {
  const p = layerPrefix(cfg, l);
  const { names, hiddenSize: c, headDim } = cfg;
  const { qkv, attentionOut, mlpIn, mlpOut } = layerLinears(cfg, l);
  const wholeProjection = cfg.qkNormScope === "projection";
  const norm = (name: string | undefined, width = c) => name ? normSpecs(cfg, p + name, width) : [];
  const linears = (modules: LinearSpec[]) => modules.flatMap((m) => linearSpecs(cfg, m));
  return [
    ...norm(names.preAttentionNorm),
    ...linears(qkv),
    ...norm(names.qNorm, wholeProjection ? cfg.numHeads * headDim : headDim),
    ...norm(names.kNorm, wholeProjection ? cfg.numKvHeads * headDim : headDim),
    ...linears([attentionOut]),
    ...norm(names.postAttentionNorm),
    ...norm(names.preMlpNorm),
    ...linears([...mlpIn, mlpOut]),
    ...norm(names.postMlpNorm),
  ];
}

/**
 * A norm's weight (starting as the identity scale: ones, zeros where the norm scales by 1 +
 * weight) and LayerNorm's bias.
 */
function normSpecs(cfg: ModelConfig, module: string, width: number): ParameterSpec[] {
  const weight: ParameterSpec = {
    name: `${module}.weight`,
    shape: [width],
    init: cfg.norm.weightOffset === 0 ? "ones" : "zeros",
  };
  if (cfg.norm.kind === "rms_norm") return [weight];
  return [weight, { name: `${module}.bias`, shape: [width], init: "zeros" }];
}

/** A linear module's weight ([out, in], or Conv1D's [in, out]) and bias. */
function linearSpecs(cfg: ModelConfig, m: LinearSpec): ParameterSpec[] {
  const shape = cfg.names.conv1d ? [m.inDim, m.outDim] : [m.outDim, m.inDim];
  const weight: ParameterSpec = { name: `${m.module}.weight`, shape, init: "normal" };
  return m.bias
    ? [weight, { name: `${m.module}.bias`, shape: [m.outDim], init: "zeros" }]
    : [weight];
}

/** Names under which a checkpoint may store parameter `name` (GPT-2 without its prefix). */
export function checkpointNames(name: string): string[] {
  return name.startsWith("transformer.") ? [name, name.slice("transformer.".length)] : [name];
}
