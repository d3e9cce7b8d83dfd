/**
 * A plain-loop f64 forward of both decoder families, written from the Hugging Face modeling
 * code independently of rft's graph builder: the whole-model tests compare against it. One
 * sequence at a time, positions 0..T-1; slow and only for tiny models.
 */

import { layerNormRef, rmsNormRef } from "../reference/layernorm.ts";
import type { Gpt2Config, LlamaConfig, ModelConfig } from "./hf_config.ts";

/** Parameters by HF name, as f64 arrays (row-major in the HF shapes). */
export type ReferenceWeights = ReadonlyMap<string, Float64Array>;

/** Logits [T, vocab] of one sequence of token ids. */
export function referenceLogits(
  cfg: ModelConfig,
  weights: ReferenceWeights,
  tokens: readonly number[],
): Float64Array {
  const get = (name: string) => {
    const w = weights.get(name);
    if (!w) throw new Error(`Reference model: missing weight "${name}"`);
    return w;
  };
  return cfg.family === "llama" ? llama(cfg, get, tokens) : gpt2(cfg, get, tokens);
}

type Get = (name: string) => Float64Array;

/** y[t] = x[t] @ W^T (+ b) with W [out, in] (HF Linear). */
function linear(x: Float64Array, T: number, W: Float64Array, out: number, b?: Float64Array) {
  const inDim = x.length / T;
  const y = new Float64Array(T * out);
  for (let t = 0; t < T; t++) {
    for (let o = 0; o < out; o++) {
      let s = b ? b[o] : 0;
      for (let i = 0; i < inDim; i++) s += x[t * inDim + i] * W[o * inDim + i];
      y[t * out + o] = s;
    }
  }
  return y;
}

/** y[t] = x[t] @ W + b with W [in, out] (HF Conv1D). */
function conv1d(x: Float64Array, T: number, W: Float64Array, b: Float64Array) {
  const out = b.length;
  const inDim = x.length / T;
  const y = new Float64Array(T * out);
  for (let t = 0; t < T; t++) {
    for (let o = 0; o < out; o++) {
      let s = b[o];
      for (let i = 0; i < inDim; i++) s += x[t * inDim + i] * W[i * out + o];
      y[t * out + o] = s;
    }
  }
  return y;
}

/** RMSNorm of each row of `x` (rows as long as `w`). */
function rmsNorm(x: Float64Array, w: Float64Array, eps: number): Float64Array {
  return rmsNormRef(x, w, w.length, eps);
}

/** LayerNorm of each row of `x` (rows as long as `w`). */
function layerNorm(x: Float64Array, w: Float64Array, b: Float64Array, eps: number): Float64Array {
  return layerNormRef(x, w, b, w.length, eps);
}

/** HF apply_rotary_pos_emb (rotate_half) on [T, heads, D] in place, positions 0..T-1. */
function rotate(x: Float64Array, T: number, heads: number, D: number, theta: number) {
  const half = D / 2;
  for (let t = 0; t < T; t++) {
    for (let h = 0; h < heads; h++) {
      const base = (t * heads + h) * D;
      for (let i = 0; i < half; i++) {
        const angle = t / theta ** ((2 * i) / D);
        const [a, b] = [x[base + i], x[base + i + half]];
        x[base + i] = a * Math.cos(angle) - b * Math.sin(angle);
        x[base + i + half] = b * Math.cos(angle) + a * Math.sin(angle);
      }
    }
  }
}

/** Causal attention of one sequence: q [T, H, D], k/v [T, Hkv, D] -> [T, H*D]. */
function attention(
  q: Float64Array,
  k: Float64Array,
  v: Float64Array,
  T: number,
  H: number,
  Hkv: number,
  D: number,
) {
  const out = new Float64Array(T * H * D);
  const group = H / Hkv;
  for (let h = 0; h < H; h++) {
    const kh = Math.floor(h / group);
    for (let t = 0; t < T; t++) {
      const scores = Array.from({ length: t + 1 }, (_, s) => {
        let dot = 0;
        for (let d = 0; d < D; d++) dot += q[(t * H + h) * D + d] * k[(s * Hkv + kh) * D + d];
        return dot / Math.sqrt(D);
      });
      const m = Math.max(...scores);
      const e = scores.map((s) => Math.exp(s - m));
      const z = e.reduce((a, b) => a + b, 0);
      for (let d = 0; d < D; d++) {
        let acc = 0;
        for (let s = 0; s <= t; s++) acc += (e[s] / z) * v[(s * Hkv + kh) * D + d];
        out[(t * H + h) * D + d] = acc;
      }
    }
  }
  return out;
}

function addInPlace(a: Float64Array, b: Float64Array): void {
  for (let i = 0; i < a.length; i++) a[i] += b[i];
}

function embed(table: Float64Array, c: number, ids: readonly number[]): Float64Array {
  const out = new Float64Array(ids.length * c);
  ids.forEach((id, t) => out.set(table.subarray(id * c, (id + 1) * c), t * c));
  return out;
}

function llama(cfg: LlamaConfig, get: Get, tokens: readonly number[]): Float64Array {
  const T = tokens.length;
  const [c, H, Hkv, D] = [cfg.hiddenSize, cfg.numHeads, cfg.numKvHeads, cfg.headDim];
  const eps = cfg.rmsNormEps;
  const bias = (name: string) => (cfg.attentionBias ? get(name) : undefined);
  const h = embed(get("model.embed_tokens.weight"), c, tokens);
  for (let l = 0; l < cfg.numLayers; l++) {
    const p = `model.layers.${l}.`;
    const x = rmsNorm(h, get(`${p}input_layernorm.weight`), eps);
    const proj = (n: string, out: number) =>
      linear(x, T, get(`${p}self_attn.${n}.weight`), out, bias(`${p}self_attn.${n}.bias`));
    let q: Float64Array = proj("q_proj", H * D);
    let k: Float64Array = proj("k_proj", Hkv * D);
    const v = proj("v_proj", Hkv * D);
    if (cfg.qkNorm) {
      q = rmsNorm(q, get(`${p}self_attn.q_norm.weight`), eps);
      k = rmsNorm(k, get(`${p}self_attn.k_norm.weight`), eps);
    }
    rotate(q, T, H, D, cfg.ropeTheta);
    rotate(k, T, Hkv, D, cfg.ropeTheta);
    const a = attention(q, k, v, T, H, Hkv, D);
    addInPlace(h, linear(a, T, get(`${p}self_attn.o_proj.weight`), c));
    const y = rmsNorm(h, get(`${p}post_attention_layernorm.weight`), eps);
    const gate = linear(y, T, get(`${p}mlp.gate_proj.weight`), cfg.intermediateSize);
    const up = linear(y, T, get(`${p}mlp.up_proj.weight`), cfg.intermediateSize);
    for (let i = 0; i < gate.length; i++) gate[i] = (gate[i] / (1 + Math.exp(-gate[i]))) * up[i];
    addInPlace(h, linear(gate, T, get(`${p}mlp.down_proj.weight`), c));
  }
  const head = cfg.tieWordEmbeddings ? "model.embed_tokens.weight" : "lm_head.weight";
  return linear(rmsNorm(h, get("model.norm.weight"), eps), T, get(head), cfg.vocabSize);
}

function gpt2(cfg: Gpt2Config, get: Get, tokens: readonly number[]): Float64Array {
  const T = tokens.length;
  const [c, H] = [cfg.hiddenSize, cfg.numHeads];
  const D = c / H;
  const eps = cfg.layerNormEps;
  const norm = (x: Float64Array, n: string) =>
    layerNorm(x, get(`${n}.weight`), get(`${n}.bias`), eps);
  const conv = (x: Float64Array, n: string) => conv1d(x, T, get(`${n}.weight`), get(`${n}.bias`));
  const h = embed(get("transformer.wte.weight"), c, tokens);
  addInPlace(h, embed(get("transformer.wpe.weight"), c, tokens.map((_, t) => t)));
  for (let l = 0; l < cfg.numLayers; l++) {
    const p = `transformer.h.${l}.`;
    const qkv = conv(norm(h, `${p}ln_1`), `${p}attn.c_attn`);
    const part = (i: number) =>
      Float64Array.from(
        { length: T * c },
        (_, j) => qkv[Math.floor(j / c) * 3 * c + i * c + (j % c)],
      );
    const a = attention(part(0), part(1), part(2), T, H, H, D);
    addInPlace(h, conv(a, `${p}attn.c_proj`));
    const m = conv(norm(h, `${p}ln_2`), `${p}mlp.c_fc`);
    for (let i = 0; i < m.length; i++) {
      const x = m[i];
      m[i] = 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)));
    }
    addInPlace(h, conv(m, `${p}mlp.c_proj`));
  }
  const head = cfg.tieWordEmbeddings ? "transformer.wte.weight" : "lm_head.weight";
  return linear(norm(h, "transformer.ln_f"), T, get(head), cfg.vocabSize);
}
