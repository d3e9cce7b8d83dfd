/**
 * The Llama family (llama, mistral, qwen2, qwen3) as an ONNX graph, following
 * `src/model/transformer.ts` step by step: RMSNorm, q/k/v projections (with qwen2's biases),
 * qwen3's per-head q/k RMSNorm, rotate-half RoPE, grouped-query attention, SwiGLU MLP, final
 * norm and the tied or untied output head. Keys and values come through the attention context,
 * so one builder serves the full-sequence graph and the KV-cached one.
 */

import type { LlamaConfig } from "../model/hf_config.ts";
import type { OnnxGraphBuilder } from "./onnx_graph_builder.ts";
import {
  applyRope,
  type AttentionContext,
  groupedAttention,
  ropeTables,
} from "./onnx_attention.ts";
import { linear, reshape, rmsNorm, silu } from "./onnx_layers.ts";

/** An ONNX value holding a parameter, by its Hugging Face name. */
export type OnnxWeights = (name: string) => string;

/** Logits [batch, seq, vocab] of a Llama-family model on int64 `ids` [batch, seq]. */
export function llamaLogits(
  b: OnnxGraphBuilder,
  cfg: LlamaConfig,
  w: OnnxWeights,
  ids: string,
  context: AttentionContext,
): string {
  const eps = cfg.rmsNormEps;
  const D = cfg.headDim;
  const layout = { heads: cfg.numHeads, kvHeads: cfg.numKvHeads, headDim: D };
  const rope = ropeTables(b, context.positions, cfg.ropeTheta, D);
  const bias = (name: string) => (cfg.attentionBias ? w(`${name}.bias`) : undefined);
  const project = (x: string, name: string, heads: number) =>
    reshape(b, linear(b, x, w(`${name}.weight`), bias(name)), [0, 0, heads, D]);
  let h = b.op("Gather", [w("model.embed_tokens.weight"), ids], { axis: { int: 0 } });
  for (let l = 0; l < cfg.numLayers; l++) {
    const p = `model.layers.${l}.`;
    const x = rmsNorm(b, h, w(`${p}input_layernorm.weight`), eps, 2);
    let q = project(x, `${p}self_attn.q_proj`, cfg.numHeads);
    let k = project(x, `${p}self_attn.k_proj`, cfg.numKvHeads);
    const v = project(x, `${p}self_attn.v_proj`, cfg.numKvHeads);
    if (cfg.qkNorm) {
      q = rmsNorm(b, q, w(`${p}self_attn.q_norm.weight`), eps, 3);
      k = rmsNorm(b, k, w(`${p}self_attn.k_norm.weight`), eps, 3);
    }
    q = applyRope(b, q, rope, D);
    k = applyRope(b, k, rope, D);
    const attn = groupedAttention(b, q, context.keysValues(l, k, v), layout, context.bias);
    h = b.op("Add", [h, linear(b, attn, w(`${p}self_attn.o_proj.weight`))]);
    const y = rmsNorm(b, h, w(`${p}post_attention_layernorm.weight`), eps, 2);
    const gated = b.op("Mul", [
      silu(b, linear(b, y, w(`${p}mlp.gate_proj.weight`))),
      linear(b, y, w(`${p}mlp.up_proj.weight`)),
    ]);
    h = b.op("Add", [h, linear(b, gated, w(`${p}mlp.down_proj.weight`))]);
  }
  const head = cfg.tieWordEmbeddings ? "model.embed_tokens.weight" : "lm_head.weight";
  return linear(b, rmsNorm(b, h, w("model.norm.weight"), eps, 2), w(head));
}
