/**
 * A plain-loop f64 forward of any decoder the family table describes, written from the Hugging
 * Face modeling code independently of rft's graph builder: the whole-model tests compare against
 * it. One sequence at a time, positions 0..T-1; slow and only for small models (or few tokens).
 */

import { layerNormRef, rmsNormRef } from "../reference/layernorm.ts";
import { layerPrefix, type ModelConfig } from "./model_config.ts";
import { layerLinears, type LinearSpec } from "./parameters.ts";
import { referenceRope } from "./rope_reference.ts";

/** Parameters by HF name (row-major in the HF shapes), f64 or f32 values computed in f64. */
export type ReferenceWeights = ReadonlyMap<string, Float64Array | Float32Array>;

type Values = Float64Array | Float32Array;

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
  return new ReferenceDecoder(cfg, get, tokens.length).logits(tokens);
}

/** y[t] = x[t] @ W^T (+ b) with W [out, in] (HF Linear), or x[t] @ W + b (W [in, out], Conv1D). */
function linear(x: Values, T: number, W: Values, out: number, conv1d: boolean, b?: Values) {
  const inDim = x.length / T;
  const y = new Float64Array(T * out);
  for (let t = 0; t < T; t++) {
    for (let o = 0; o < out; o++) {
      let s = b ? b[o] : 0;
      for (let i = 0; i < inDim; i++) {
        s += x[t * inDim + i] * (conv1d ? W[i * out + o] : W[o * inDim + i]);
      }
      y[t * out + o] = s;
    }
  }
  return y;
}

/** Columns [from, from + width) of each of the T rows of x. */
function columns(x: Float64Array, T: number, from: number, width: number): Float64Array {
  const cols = x.length / T;
  return Float64Array.from({ length: T * width }, (_, j) => {
    const t = Math.floor(j / width);
    return x[t * cols + from + (j % width)];
  });
}

/**
 * HF apply_rotary_pos_emb (rotate_half) on [T, heads, D] in place, positions 0..T-1: the first
 * 2 * invFreq.length dims of each head rotate (partial rotary), the rest stay.
 */
function rotate(
  x: Float64Array,
  [T, heads, D]: [number, number, number],
  invFreq: Float64Array,
  factor: number,
) {
  const half = invFreq.length;
  for (let t = 0; t < T; t++) {
    for (let h = 0; h < heads; h++) {
      const base = (t * heads + h) * D;
      for (let i = 0; i < half; i++) {
        const angle = t * invFreq[i];
        const [cos, sin] = [Math.cos(angle) * factor, Math.sin(angle) * factor];
        const [a, b] = [x[base + i], x[base + i + half]];
        x[base + i] = a * cos - b * sin;
        x[base + i + half] = b * cos + a * sin;
      }
    }
  }
}

/** Sizes and mask of one causal attention. */
interface AttentionShape {
  T: number;
  H: number;
  Hkv: number;
  D: number;
  scale: number;
  /** Query t sees keys s with t - s < window. */
  window: number;
  /** Scores become softcap * tanh(score / softcap); 0: none. */
  softcap: number;
}

/** Causal attention of one sequence: q [T, H, D], k/v [T, Hkv, D] -> [T, H*D]. */
function attention(q: Float64Array, k: Float64Array, v: Float64Array, a: AttentionShape) {
  const { T, H, Hkv, D } = a;
  const out = new Float64Array(T * H * D);
  const group = H / Hkv;
  for (let h = 0; h < H; h++) {
    const kh = Math.floor(h / group);
    for (let t = 0; t < T; t++) {
      const first = Math.max(0, t - a.window + 1);
      const scores = Array.from({ length: t + 1 - first }, (_, j) => {
        let dot = 0;
        for (let d = 0; d < D; d++) {
          dot += q[(t * H + h) * D + d] * k[((first + j) * Hkv + kh) * D + d];
        }
        const score = dot * a.scale;
        return a.softcap > 0 ? a.softcap * Math.tanh(score / a.softcap) : score;
      });
      const m = Math.max(...scores);
      const e = scores.map((s) => Math.exp(s - m));
      const z = e.reduce((x, y) => x + y, 0);
      for (let d = 0; d < D; d++) {
        let acc = 0;
        for (let j = 0; j < e.length; j++) acc += (e[j] / z) * v[((first + j) * Hkv + kh) * D + d];
        out[(t * H + h) * D + d] = acc;
      }
    }
  }
  return out;
}

/** a += b * factor. */
function addInPlace(a: Float64Array, b: Float64Array, factor: number): void {
  for (let i = 0; i < a.length; i++) a[i] += b[i] * factor;
}

/** `activation` (silu, or GELU's tanh form) of every element. */
function activate(x: Float64Array, activation: ModelConfig["activation"]): Float64Array {
  return x.map((v) =>
    activation === "silu"
      ? v / (1 + Math.exp(-v))
      : 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v ** 3)))
  );
}

/** One sequence through the decoder `cfg` describes (see the file comment). */
class ReferenceDecoder {
  constructor(
    readonly cfg: ModelConfig,
    readonly get: (name: string) => Values,
    readonly T: number,
  ) {}

  logits(tokens: readonly number[]): Float64Array {
    const { cfg, get, T } = this;
    const c = cfg.hiddenSize;
    const h = new Float64Array(T * c);
    tokens.forEach((id, t) => {
      for (let i = 0; i < c; i++) {
        h[t * c + i] = get(cfg.names.embedding)[id * c + i] * cfg.embeddingScale;
        if (cfg.names.positionEmbedding) {
          h[t * c + i] += get(cfg.names.positionEmbedding)[t * c + i];
        }
      }
    });
    for (let l = 0; l < cfg.numLayers; l++) {
      addInPlace(h, this.attentionBlock(h, l), cfg.residualScale ?? 1);
      addInPlace(h, this.mlpBlock(h, l), cfg.residualScale ?? 1);
    }
    const head = get(cfg.tieWordEmbeddings ? cfg.names.embedding : cfg.names.lmHead);
    const logits = linear(this.norm(h, cfg.names.finalNorm), T, head, cfg.vocabSize, false)
      .map((x) => x * (cfg.logitScale ?? 1));
    const cap = cfg.finalLogitSoftcap;
    return cap === undefined ? logits : logits.map((x) => cap * Math.tanh(x / cap));
  }

  /** Norm `module` of the rows of x (x itself when the family has none there). */
  norm(x: Float64Array, module: string | undefined): Float64Array {
    if (!module) return x;
    const { kind, eps, weightOffset } = this.cfg.norm;
    const w = this.get(`${module}.weight`);
    return kind === "rms_norm"
      ? rmsNormRef(x, w, w.length, eps, weightOffset)
      : layerNormRef(x, w, this.get(`${module}.bias`), w.length, eps);
  }

  /** Module m of x. */
  linear(x: Float64Array, m: LinearSpec): Float64Array {
    const b = m.bias ? this.get(`${m.module}.bias`) : undefined;
    const W = this.get(`${m.module}.weight`);
    return linear(x, this.T, W, m.outDim, this.cfg.names.conv1d, b);
  }

  attentionBlock(h: Float64Array, l: number): Float64Array {
    const { cfg, T } = this;
    const [H, Hkv, D] = [cfg.numHeads, cfg.numKvHeads, cfg.headDim];
    const p = layerPrefix(cfg, l);
    const { names } = cfg;
    const { qkv, attentionOut } = layerLinears(cfg, l);
    const x = this.norm(h, names.preAttentionNorm && p + names.preAttentionNorm);
    let [q, k, v] = qkv.length === 3 ? qkv.map((m) => this.linear(x, m)) : (() => {
      const fused = this.linear(x, qkv[0]);
      return [columns(fused, T, 0, H * D), columns(fused, T, H * D, Hkv * D)].concat(
        columns(fused, T, (H + Hkv) * D, Hkv * D),
      );
    })();
    if (names.qNorm) q = this.norm(q, p + names.qNorm);
    if (names.kNorm) k = this.norm(k, p + names.kNorm);
    const spec = cfg.layers[l];
    if (spec.rotary) {
      const { theta, scaling, rotaryDim } = spec.rotary;
      const rope = referenceRope(theta, scaling, rotaryDim, T, cfg.maxPositions);
      rotate(q, [T, H, D], rope.invFreq, rope.attentionFactor);
      rotate(k, [T, Hkv, D], rope.invFreq, rope.attentionFactor);
    }
    const window = spec.window ?? Infinity;
    const softcap = cfg.attentionSoftcap ?? 0;
    const a = attention(q, k, v, { T, H, Hkv, D, scale: cfg.attentionScale, window, softcap });
    return this.norm(
      this.linear(a, attentionOut),
      names.postAttentionNorm && p + names.postAttentionNorm,
    );
  }

  mlpBlock(h: Float64Array, l: number): Float64Array {
    const { cfg, T } = this;
    const p = layerPrefix(cfg, l);
    const { names } = cfg;
    const { mlpIn, mlpOut } = layerLinears(cfg, l);
    const x = this.norm(h, names.preMlpNorm && p + names.preMlpNorm);
    const ff = cfg.intermediateSize;
    let act: Float64Array;
    if ("fc" in names.mlpIn) act = activate(this.linear(x, mlpIn[0]), cfg.activation);
    else {
      const [gate, up] = mlpIn.length === 2
        ? mlpIn.map((m) => this.linear(x, m))
        : [0, ff].map((from) => columns(this.linear(x, mlpIn[0]), T, from, ff));
      act = activate(gate, cfg.activation).map((g, i) => g * up[i]);
    }
    return this.norm(this.linear(act, mlpOut), names.postMlpNorm && p + names.postMlpNorm);
  }
}
