/**
 * GPT-2 as an ONNX graph, following `src/model/transformer.ts` step by step: token plus learned
 * position embeddings, LayerNorm, the fused qkv Conv1D split in three, causal attention, tanh
 * GELU MLP, final LayerNorm and the tied or untied output head. Keys and values come through
 * the attention context (with or without a KV cache).
 */

import type { Gpt2Config } from "../model/hf_config.ts";
import type { OnnxGraphBuilder } from "./onnx_graph_builder.ts";
import { type AttentionContext, groupedAttention } from "./onnx_attention.ts";
import { conv1d, geluTanh, layerNorm, linear, reshape } from "./onnx_layers.ts";
import type { OnnxWeights } from "./llama_onnx.ts";

/** Logits [batch, seq, vocab] of a GPT-2 model on int64 `ids` [batch, seq]. */
export function gpt2Logits(
  b: OnnxGraphBuilder,
  cfg: Gpt2Config,
  w: OnnxWeights,
  ids: string,
  context: AttentionContext,
): string {
  const c = cfg.hiddenSize;
  const D = c / cfg.numHeads;
  const layout = { heads: cfg.numHeads, kvHeads: cfg.numHeads, headDim: D };
  const norm = (x: string, name: string) =>
    layerNorm(b, x, w(`${name}.weight`), w(`${name}.bias`), cfg.layerNormEps);
  const conv = (x: string, name: string) => conv1d(b, x, w(`${name}.weight`), w(`${name}.bias`));
  const gather = (table: string, indices: string) =>
    b.op("Gather", [w(table), indices], { axis: { int: 0 } });
  let h = b.op("Add", [
    gather("transformer.wte.weight", ids),
    gather("transformer.wpe.weight", context.positions),
  ]);
  for (let l = 0; l < cfg.numLayers; l++) {
    const p = `transformer.h.${l}.`;
    const qkv = conv(norm(h, `${p}ln_1`), `${p}attn.c_attn`);
    const [q, k, v] = b.ops("Split", [qkv, b.int64s([c, c, c])], 3, { axis: { int: 2 } })
      .map((x) => reshape(b, x, [0, 0, cfg.numHeads, D]));
    const attn = groupedAttention(b, q, context.keysValues(l, k, v), layout, context.bias);
    h = b.op("Add", [h, conv(attn, `${p}attn.c_proj`)]);
    h = b.op("Add", [
      h,
      conv(geluTanh(b, conv(norm(h, `${p}ln_2`), `${p}mlp.c_fc`)), `${p}mlp.c_proj`),
    ]);
  }
  const head = cfg.tieWordEmbeddings ? "transformer.wte.weight" : "lm_head.weight";
  return linear(b, norm(h, "transformer.ln_f"), w(head));
}
