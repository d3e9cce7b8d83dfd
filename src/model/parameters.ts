/**
 * The parameters of each architecture under their Hugging Face names and shapes, in one table
 * that loading (validation), random init and saving all use. GPT-2 names carry the
 * `transformer.` prefix that `GPT2LMHeadModel.save_pretrained` writes; loading also accepts
 * the bare names of `GPT2Model` checkpoints.
 */

import type { Gpt2Config, LlamaConfig, ModelConfig } from "./hf_config.ts";

/** How a parameter is initialised when a model is created from scratch. */
export type InitKind = "normal" | "ones" | "zeros";

/** One parameter: HF name, shape, and how it starts in a fresh model. */
export interface ParameterSpec {
  name: string;
  shape: number[];
  init: InitKind;
}

/** Every parameter of a model with this config, in a stable order. */
export function parameterSpecs(cfg: ModelConfig): ParameterSpec[] {
  return cfg.family === "llama" ? llamaSpecs(cfg) : gpt2Specs(cfg);
}

function llamaSpecs(cfg: LlamaConfig): ParameterSpec[] {
  const c = cfg.hiddenSize;
  const q = cfg.numHeads * cfg.headDim;
  const kv = cfg.numKvHeads * cfg.headDim;
  const specs: ParameterSpec[] = [
    { name: "model.embed_tokens.weight", shape: [cfg.vocabSize, c], init: "normal" },
  ];
  for (let l = 0; l < cfg.numLayers; l++) {
    const p = `model.layers.${l}.`;
    specs.push({ name: `${p}input_layernorm.weight`, shape: [c], init: "ones" });
    for (const [proj, out] of [["q_proj", q], ["k_proj", kv], ["v_proj", kv]] as const) {
      specs.push({ name: `${p}self_attn.${proj}.weight`, shape: [out, c], init: "normal" });
      if (cfg.attentionBias) {
        specs.push({ name: `${p}self_attn.${proj}.bias`, shape: [out], init: "zeros" });
      }
    }
    if (cfg.qkNorm) {
      specs.push({ name: `${p}self_attn.q_norm.weight`, shape: [cfg.headDim], init: "ones" });
      specs.push({ name: `${p}self_attn.k_norm.weight`, shape: [cfg.headDim], init: "ones" });
    }
    specs.push(
      { name: `${p}self_attn.o_proj.weight`, shape: [c, q], init: "normal" },
      { name: `${p}post_attention_layernorm.weight`, shape: [c], init: "ones" },
      { name: `${p}mlp.gate_proj.weight`, shape: [cfg.intermediateSize, c], init: "normal" },
      { name: `${p}mlp.up_proj.weight`, shape: [cfg.intermediateSize, c], init: "normal" },
      { name: `${p}mlp.down_proj.weight`, shape: [c, cfg.intermediateSize], init: "normal" },
    );
  }
  specs.push({ name: "model.norm.weight", shape: [c], init: "ones" });
  if (!cfg.tieWordEmbeddings) {
    specs.push({ name: "lm_head.weight", shape: [cfg.vocabSize, c], init: "normal" });
  }
  return specs;
}

function gpt2Specs(cfg: Gpt2Config): ParameterSpec[] {
  const c = cfg.hiddenSize;
  const specs: ParameterSpec[] = [
    { name: "transformer.wte.weight", shape: [cfg.vocabSize, c], init: "normal" },
    { name: "transformer.wpe.weight", shape: [cfg.maxPositions, c], init: "normal" },
  ];
  const linear = (name: string, inDim: number, outDim: number): ParameterSpec[] => [
    { name: `${name}.weight`, shape: [inDim, outDim], init: "normal" }, // Conv1D: [in, out]
    { name: `${name}.bias`, shape: [outDim], init: "zeros" },
  ];
  const norm = (name: string): ParameterSpec[] => [
    { name: `${name}.weight`, shape: [c], init: "ones" },
    { name: `${name}.bias`, shape: [c], init: "zeros" },
  ];
  for (let l = 0; l < cfg.numLayers; l++) {
    const p = `transformer.h.${l}.`;
    specs.push(
      ...norm(`${p}ln_1`),
      ...linear(`${p}attn.c_attn`, c, 3 * c),
      ...linear(`${p}attn.c_proj`, c, c),
      ...norm(`${p}ln_2`),
      ...linear(`${p}mlp.c_fc`, c, cfg.intermediateSize),
      ...linear(`${p}mlp.c_proj`, cfg.intermediateSize, c),
    );
  }
  specs.push(...norm("transformer.ln_f"));
  if (!cfg.tieWordEmbeddings) {
    specs.push({ name: "lm_head.weight", shape: [cfg.vocabSize, c], init: "normal" });
  }
  return specs;
}

/** Names under which a checkpoint may store parameter `name` (GPT-2 without its prefix). */
export function checkpointNames(name: string): string[] {
  return name.startsWith("transformer.") ? [name, name.slice("transformer.".length)] : [name];
}
