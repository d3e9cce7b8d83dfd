/**
 * The decoder architectures as graph builders: token ids, positions and segment ids in, logits
 * out, following the Hugging Face modeling code exactly (Llama family: RMSNorm, rotate-half
 * RoPE, grouped-query attention, SwiGLU, optional q/k/v bias and q/k norm; GPT-2: LayerNorm,
 * learned positions, fused qkv Conv1D, tanh GELU). Only builds graphs: weights come from the
 * caller, and nothing here runs a kernel.
 */

import type { GpuContext } from "../gpu/device.ts";
import type { Tensor } from "../graph/tensor.ts";
import { add } from "../ops/binary.ts";
import { causalAttention } from "../ops/attention.ts";
import { embedding } from "../ops/embedding.ts";
import { layerNorm } from "../ops/layernorm.ts";
import { gated } from "../ops/gated.ts";
import { matmul, matmulAccumulate } from "../ops/matmul.ts";
import { normedGatedGemv, normedGatedGemvMisfit } from "../ops/normed_gated_gemv.ts";
import {
  fillsTakePrologues,
  prologueMatmul,
  prologueMatmulAccumulate,
} from "../ops/prologue_matmul.ts";
import { reshape } from "../ops/reshape.ts";
import { rmsNorm } from "../ops/rmsnorm.ts";
import { rope } from "../ops/rope.ts";
import { padLast, sliceLast } from "../ops/slice.ts";
import { gelu, scale } from "../ops/unary.ts";
import type { Gpt2Config, LlamaConfig, ModelConfig } from "./hf_config.ts";

/** One row shard of a weight: the rows from `first` on. */
export interface RowShard {
  weight: Tensor;
  first: number;
}

/** Parameters by HF name, as graph tensors. */
export interface WeightLookup {
  (name: string): Tensor;
  /**
   * The row shards of a weight stored in pieces (`row_shards.ts`), in row order; undefined for
   * a weight stored whole, which the call form returns.
   */
  shards?(name: string): readonly RowShard[] | undefined;
  /**
   * The LoRA adapter of linear module `module` (HF name without `.weight`), or undefined when
   * it has none: its output gains `scale * (x A^T) B^T`.
   */
  lora?(module: string): LoraWeights | undefined;
}

/** A module's adapter in a graph: A [r, in], B [out, r] and the factor alpha / r. */
export interface LoraWeights {
  a: Tensor;
  b: Tensor;
  scale: number;
}

/**
 * Per-token inputs, each [batch, seq] i32: token ids, positions (restarting at 0 in every
 * sequence, continuing after a KV cache), and segment ids (tokens attend only within their own
 * segment; < 0 marks padding).
 */
export interface TokenInputs {
  ids: Tensor;
  positions: Tensor;
  segments: Tensor;
}

/** Checks that rft implements everything `cfg` asks for; throws naming the key otherwise. */
export function checkArchitecture(cfg: ModelConfig): void {
  if (cfg.family === "llama") {
    if (cfg.hiddenAct !== "silu") {
      throw new Error(
        `Cannot build ${cfg.modelType}: hidden_act "${cfg.hiddenAct}"; expected "silu"`,
      );
    }
    if (cfg.ropeScaling !== null) {
      throw new Error(
        `Cannot build ${cfg.modelType}: rope_scaling ${
          JSON.stringify(cfg.ropeScaling)
        } is not supported; expected null`,
      );
    }
  } else if (!["gelu_new", "gelu_pytorch_tanh"].includes(cfg.activation)) {
    throw new Error(
      `Cannot build gpt2: activation_function "${cfg.activation}"; expected "gelu_new"`,
    );
  }
}

/** RoPE of a layer's queries and keys: the tokens' positions and HF's `rope_theta`. */
export interface Rotary {
  positions: Tensor;
  theta: number;
}

/**
 * The attention of layer `layer`: q [batch, seq, heads, headDim], k and v [batch, seq, kvHeads,
 * headDim] to [batch, seq, heads, headDim]. With `rotary` (Llama family) q and k are not yet
 * rotated: the function applies RoPE ({@link rotate}) or fuses it into what it does anyway
 * (generation rotates the keys as it writes them into the KV cache). Training uses causal
 * attention over segments ({@link causalAttentionFn}); generation writes k, v into a KV cache and
 * attends over it.
 */
export type AttentionFn = (
  layer: number,
  q: Tensor,
  k: Tensor,
  v: Tensor,
  rotary?: Rotary,
) => Tensor;

/** `x` rotated by RoPE as `rotary` says, or `x` itself without one. */
export function rotate(x: Tensor, rotary: Rotary | undefined): Tensor {
  return rotary ? rope(x, rotary.positions, rotary.theta) : x;
}

/** Causal attention within segments (`segments` [batch, seq], < 0 padding), RoPE applied. */
export function causalAttentionFn(segments: Tensor): AttentionFn {
  return (_layer, q, k, v, rotary) =>
    causalAttention(rotate(q, rotary), rotate(k, rotary), v, segments);
}

/** How a built graph will be used. */
export interface BuildOptions {
  /**
   * The graph is never differentiated (generation, scoring): each residual addition is made in
   * place by the projection that produces it (`matmulAccumulate`: one dispatch and one tensor
   * fewer per residual, the same values). Graphs that are differentiated must leave it unset:
   * their backward reads the residual stream the in-place additions overwrite.
   */
  inference?: boolean;
  /**
   * With `inference`: the Llama family's RMSNorms before the q/k/v and gate/up products and its
   * SwiGLU before the down product are computed in those products' operand fills
   * (`prologue_matmul.ts`; the same values), not by passes of their own. For adapters whose
   * products fill textures ({@link inferenceBuild} decides).
   */
  prologueProducts?: boolean;
  /**
   * With `inference`: whether the Llama family's MLPs with weights [intermediate, hidden] (n, k)
   * run their RMSNorm, gate and up products and SwiGLU as one `normedGatedGemv` (graphs of one
   * token row on CPU adapters; {@link inferenceBuild} decides). A gate or up module with a LoRA
   * adapter keeps its own products.
   */
  gatedGemv?: (n: number, k: number) => boolean;
}

/** The build options of an inference graph of `rows` token rows (batch x sequence) on `gpu`. */
export function inferenceBuild(gpu: GpuContext, rows: number): BuildOptions {
  const options = { inference: true, prologueProducts: fillsTakePrologues(gpu, rows) };
  if (rows !== 1) return options;
  return { ...options, gatedGemv: (n, k) => normedGatedGemvMisfit(gpu, n, k) === undefined };
}

/** Ids and positions, each [batch, seq] i32 (or u32 ids). */
export type HiddenInputs = Pick<TokenInputs, "ids" | "positions">;

/**
 * Logits [batch, seq - from, vocab] of the model with config `cfg` on `inputs`, at positions
 * `from` .. seq - 1 only (a loss that reads no logits before `from` skips the LM head there).
 */
export function buildLogits(
  cfg: ModelConfig,
  w: WeightLookup,
  inputs: TokenInputs,
  from = 0,
  options: BuildOptions = {},
): Tensor {
  let hidden = buildHidden(cfg, w, inputs, causalAttentionFn(inputs.segments), options);
  if (from > 0) {
    const [batch, seq, width] = hidden.shape;
    const kept = reshape(hidden, [batch, seq * width]);
    hidden = reshape(sliceLast(kept, from * width, (seq - from) * width), [
      batch,
      seq - from,
      width,
    ]);
  }
  return lmHead(cfg, w, hidden);
}

/** Final hidden states [batch, seq, hidden] (after the last norm), attention supplied. */
export function buildHidden(
  cfg: ModelConfig,
  w: WeightLookup,
  inputs: HiddenInputs,
  attention: AttentionFn,
  options: BuildOptions = {},
): Tensor {
  checkArchitecture(cfg);
  if (options.prologueProducts && !options.inference) {
    throw new Error("Cannot build prologue products into a graph that is differentiated");
  }
  const residual = options.inference ? residualInPlace : residualAdd;
  return cfg.family === "llama"
    ? llamaHidden(cfg, w, inputs, attention, residual, options)
    : gpt2Hidden(cfg, w, inputs, attention, residual);
}

/** Logits [..., vocab] from hidden states [..., hidden] (tied or untied output head). */
export function lmHead(cfg: ModelConfig, w: WeightLookup, h: Tensor): Tensor {
  const head = !cfg.tieWordEmbeddings
    ? "lm_head.weight"
    : cfg.family === "llama"
    ? "model.embed_tokens.weight"
    : "transformer.wte.weight";
  const shards = w.shards?.(head);
  if (!shards) return matmul(h, w(head), { transB: true });
  // Each shard's logits in their columns of the vocabulary, summed: a concatenation.
  return shards
    .map(({ weight, first }) => padLast(matmul(h, weight, { transB: true }), first, cfg.vocabSize))
    .reduce((a, b) => add(a, b));
}

/** Token embeddings of `ids` from weight `name`, gathered shard by shard when it is sharded. */
function tokenEmbedding(w: WeightLookup, name: string, ids: Tensor): Tensor {
  const shards = w.shards?.(name);
  if (!shards) return embedding(w(name), ids);
  return shards.map(({ weight, first }) => embedding(weight, ids, first)).reduce((a, b) =>
    add(a, b)
  );
}

/** A linear module: HF nn.Linear (W stored [out, in]) or GPT-2's Conv1D (W stored [in, out]). */
interface Projection {
  name: string;
  bias: boolean;
  /** W is stored [out, in] (nn.Linear) rather than [in, out] (Conv1D). */
  transB: boolean;
}

const linearModule = (name: string, bias: boolean): Projection => ({ name, bias, transB: true });
const conv1dModule = (name: string): Projection => ({ name, bias: true, transB: false });

/** `x @ op(W) (+ b)` of module `m`, plus its LoRA update when it has one. */
function project(x: Tensor, w: WeightLookup, m: Projection): Tensor {
  const y = matmul(x, w(`${m.name}.weight`), { transB: m.transB });
  return withLora(x, w, m.name, m.bias ? add(y, w(`${m.name}.bias`)) : y);
}

/** HF nn.Linear: x @ W^T (+ b), W stored [out, in]; plus its LoRA update when it has one. */
function linear(x: Tensor, w: WeightLookup, name: string, bias: boolean): Tensor {
  return project(x, w, linearModule(name, bias));
}

/** HF Conv1D (GPT-2): x @ W + b, W stored [in, out]; plus its LoRA update when it has one. */
function conv1d(x: Tensor, w: WeightLookup, name: string): Tensor {
  return project(x, w, conv1dModule(name));
}

/** The residual stream `h` plus module `m`'s output on `x`. */
type Residual = (h: Tensor, x: Tensor, w: WeightLookup, m: Projection) => Tensor;

/** `h + m(x)` as a separate addition (graphs that are differentiated). */
const residualAdd: Residual = (h, x, w, m) => add(h, project(x, w, m));

/**
 * `h + m(x)` added in place into `h` by the projection's own stores (and the adapter's), for
 * graphs never differentiated (see {@link BuildOptions.inference}). The only other readers of
 * `h` are the norm that starts the block or the products computing it in their fills, which the
 * projection's input depends on, so they have run.
 */
const residualInPlace: Residual = (h, x, w, m) => {
  let out = matmulAccumulate(h, x, w(`${m.name}.weight`), { transB: m.transB });
  const adapter = w.lora?.(m.name);
  if (adapter) out = matmulAccumulate(out, loraDown(x, adapter), adapter.b, { transB: true });
  return m.bias ? add(out, w(`${m.name}.bias`)) : out;
};

/**
 * `y + scale * (x A^T) B^T` when `module` has an adapter (PEFT's LoRA forward, the scale on
 * the rank-r product where it costs least), else `y`.
 */
function withLora(x: Tensor, w: WeightLookup, module: string, y: Tensor): Tensor {
  const adapter = w.lora?.(module);
  return adapter ? add(y, matmul(loraDown(x, adapter), adapter.b, { transB: true })) : y;
}

/** `scale * (x A^T)`: an adapter's rank-r projection, scaled where it costs least. */
function loraDown(x: Tensor, adapter: LoraWeights): Tensor {
  return scale(matmul(x, adapter.a, { transB: true }), adapter.scale);
}

/**
 * An RMSNorm's output as the linear modules reading it take it: computed once as a tensor, or,
 * with `inFills`, by each module's product in its operand fill (a module with a LoRA adapter,
 * which reads the tensor itself, gets the tensor).
 */
class NormedInput {
  #x?: Tensor;

  constructor(
    readonly h: Tensor,
    readonly weight: Tensor,
    readonly eps: number,
    readonly inFills: boolean,
  ) {}

  /** The normalized tensor, computed on first use. */
  get x(): Tensor {
    return this.#x ??= rmsNorm(this.h, this.weight, this.eps);
  }

  /** HF nn.Linear `name` of the normalized input (as {@link linear}). */
  linear(w: WeightLookup, name: string, bias: boolean): Tensor {
    if (!this.inFills || w.lora?.(name)) return linear(this.x, w, name, bias);
    const prologue = { kind: "rms_norm", eps: this.eps } as const;
    const y = prologueMatmul(this.h, this.weight, w(`${name}.weight`), prologue, { transB: true });
    return bias ? add(y, w(`${name}.bias`)) : y;
  }
}

/** The Llama family's MLP activation as the down product's prologue. */
const SWIGLU = { kind: "gated", gate: "silu" } as const;

function llamaHidden(
  cfg: LlamaConfig,
  w: WeightLookup,
  inp: HiddenInputs,
  attention: AttentionFn,
  residual: Residual,
  options: BuildOptions,
): Tensor {
  const [batch, seq] = inp.ids.shape;
  const eps = cfg.rmsNormEps;
  const prologues = Boolean(options.prologueProducts);
  const gatedGemv = Boolean(options.gatedGemv?.(cfg.intermediateSize, cfg.hiddenSize));
  const heads = (x: Tensor, n: number) => reshape(x, [batch, seq, n, cfg.headDim]);
  const rotary = { positions: inp.positions, theta: cfg.ropeTheta };
  // The fills read rows four values at a time.
  const normsInFills = prologues && cfg.hiddenSize % 4 === 0;
  const swigluInFill = prologues && cfg.intermediateSize % 4 === 0;
  // The residual stream h plus the MLP of the layer whose modules start with p.
  const mlp = (h: Tensor, p: string): Tensor => {
    const normWeight = w(`${p}post_attention_layernorm.weight`);
    const [gateName, upName, down] = ["gate_proj", "up_proj", "down_proj"].map((m) =>
      `${p}mlp.${m}`
    );
    if (gatedGemv && !w.lora?.(gateName) && !w.lora?.(upName)) {
      const gateUp = [w(`${gateName}.weight`), w(`${upName}.weight`)] as const;
      const act = normedGatedGemv(h, normWeight, ...gateUp, { eps, gate: "silu" });
      return residual(h, act, w, linearModule(down, false));
    }
    const y = new NormedInput(h, normWeight, eps, normsInFills);
    const gate = y.linear(w, gateName, false);
    const up = y.linear(w, upName, false);
    return swigluInFill && !w.lora?.(down)
      ? prologueMatmulAccumulate(h, gate, up, w(`${down}.weight`), SWIGLU, { transB: true })
      : residual(h, gated("silu", gate, up), w, linearModule(down, false));
  };
  let h = tokenEmbedding(w, "model.embed_tokens.weight", inp.ids);
  for (let l = 0; l < cfg.numLayers; l++) {
    const p = `model.layers.${l}.`;
    const x = new NormedInput(h, w(`${p}input_layernorm.weight`), eps, normsInFills);
    let q = heads(x.linear(w, `${p}self_attn.q_proj`, cfg.attentionBias), cfg.numHeads);
    let k = heads(x.linear(w, `${p}self_attn.k_proj`, cfg.attentionBias), cfg.numKvHeads);
    const v = heads(x.linear(w, `${p}self_attn.v_proj`, cfg.attentionBias), cfg.numKvHeads);
    if (cfg.qkNorm) {
      q = rmsNorm(q, w(`${p}self_attn.q_norm.weight`), eps);
      k = rmsNorm(k, w(`${p}self_attn.k_norm.weight`), eps);
    }
    const attn = attention(l, q, k, v, rotary);
    const merged = reshape(attn, [batch, seq, cfg.numHeads * cfg.headDim]);
    h = residual(h, merged, w, linearModule(`${p}self_attn.o_proj`, false));
    h = mlp(h, p);
  }
  return rmsNorm(h, w("model.norm.weight"), eps);
}

function gpt2Hidden(
  cfg: Gpt2Config,
  w: WeightLookup,
  inp: HiddenInputs,
  attention: AttentionFn,
  residual: Residual,
): Tensor {
  const [batch, seq] = inp.ids.shape;
  const c = cfg.hiddenSize;
  const headDim = c / cfg.numHeads;
  const eps = cfg.layerNormEps;
  const norm = (x: Tensor, name: string) =>
    layerNorm(x, w(`${name}.weight`), w(`${name}.bias`), eps);
  const heads = (x: Tensor) => reshape(x, [batch, seq, cfg.numHeads, headDim]);
  let h = add(
    tokenEmbedding(w, "transformer.wte.weight", inp.ids),
    embedding(w("transformer.wpe.weight"), inp.positions),
  );
  for (let l = 0; l < cfg.numLayers; l++) {
    const p = `transformer.h.${l}.`;
    const qkv = conv1d(norm(h, `${p}ln_1`), w, `${p}attn.c_attn`);
    const [q, k, v] = [0, 1, 2].map((i) => heads(sliceLast(qkv, i * c, c)));
    const attn = reshape(attention(l, q, k, v), [batch, seq, c]);
    h = residual(h, attn, w, conv1dModule(`${p}attn.c_proj`));
    const m = gelu(conv1d(norm(h, `${p}ln_2`), w, `${p}mlp.c_fc`));
    h = residual(h, m, w, conv1dModule(`${p}mlp.c_proj`));
  }
  return norm(h, "transformer.ln_f");
}
