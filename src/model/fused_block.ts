/**
 * The fused paths of inference graphs, behind one seam so the decoder's own code
 * (`decoder.ts`) reads as the modeling code does: the speed flags of {@link BuildOptions}, the
 * RMSNorm computed in the operand fills of the products reading it (`prologue_matmul.ts`), the
 * gated activation computed in the down product's fill, and a one-token-row MLP's norm, gate and
 * up products and activation as one `normedGatedGemv`. Each applies where the description allows
 * it (RMSNorms, a gated MLP of separate modules without biases; the down product's fill where no
 * post-MLP norm or residual scale follows it; f32 weights on CPU adapters: the fills and the
 * gemv read textures of f32 weights; GPUs' gemv reads halves too) and gives the same values as
 * the plain path. On GPUs a one-token-row
 * attention block's norm and q/k/v products (and biases) are one `normedQkvGemv` where no q/k
 * norm follows them and no LoRA adapter is on them (f32 or half weights).
 */

import type { GpuContext } from "../gpu/device.ts";
import { isHalf, type Tensor } from "../graph/tensor.ts";
import { add } from "../ops/binary.ts";
import { normedGatedGemv, normedGatedGemvMisfit } from "../ops/normed_gated_gemv.ts";
import { normedQkvGemv, normedQkvGemvMisfit } from "../ops/normed_qkv_gemv.ts";
import type { WeightFormat } from "../ops/weight_format.ts";
import {
  fillsTakePrologues,
  prologueMatmul,
  prologueMatmulAccumulate,
} from "../ops/prologue_matmul.ts";
import { project, type Projection } from "./linear_modules.ts";
import type { ModelConfig } from "./model_config.ts";
import type { WeightLookup } from "./transformer.ts";

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
   * With `inference`: the RMSNorms before the q/k/v and gate/up products and the gated
   * activation before the down product are computed in those products' operand fills
   * (`prologue_matmul.ts`; the same values), not by passes of their own. For adapters whose
   * products fill textures ({@link inferenceBuild} decides).
   */
  prologueProducts?: boolean;
  /**
   * With `inference`: whether the gated MLPs with weights [intermediate, hidden] (n, k) stored in
   * `format` run their RMSNorm, gate and up products and activation as one `normedGatedGemv`
   * (graphs of one token row; {@link inferenceBuild} decides). A gate or up module with a LoRA
   * adapter keeps its own products.
   */
  gatedGemv?: (n: number, k: number, format: WeightFormat) => boolean;
  /**
   * With `inference`: whether the attention blocks' RMSNorm and q/k/v products with their
   * biases, on rows of `k` values by weights stored in `format`, run as one `normedQkvGemv`
   * (graphs of one token row on GPUs; {@link inferenceBuild} decides). Families with q/k norms
   * and layers with a LoRA adapter on q, k or v keep their own products.
   */
  qkvGemv?: (k: number, format: WeightFormat) => boolean;
  /**
   * Graphs that are differentiated: each decoder layer is a checkpointed region
   * (`graph/checkpoint.ts`): its activations are recomputed in the backward pass from the
   * layer's input instead of kept, so a step keeps one hidden state per layer and token plus
   * one layer's activations at a time. The same gradients.
   */
  recompute?: boolean;
}

/** The build options of an inference graph of `rows` token rows (batch x sequence) on `gpu`. */
export function inferenceBuild(gpu: GpuContext, rows: number): BuildOptions {
  const options = { inference: true, prologueProducts: fillsTakePrologues(gpu, rows) };
  if (rows !== 1) return options;
  return {
    ...options,
    gatedGemv: (n, k, format) => normedGatedGemvMisfit(gpu, n, k, format) === undefined,
    qkvGemv: (k, format) => normedQkvGemvMisfit(gpu, { rows, k, format }) === undefined,
  };
}

/**
 * A norm's output as the linear modules reading it take it: computed once as a tensor, or,
 * with `fill`, by each module's product in its operand fill (a module with a LoRA adapter, which
 * reads the tensor itself, gets the tensor).
 */
export class NormedInput {
  #x?: Tensor;

  constructor(
    readonly h: Tensor,
    readonly compute: () => Tensor,
    readonly fill?: { weight: Tensor; eps: number; weightOffset: number },
  ) {}

  /** The normalized tensor, computed on first use. */
  get x(): Tensor {
    return this.#x ??= this.compute();
  }

  /** Module `m` of the normalized input. */
  project(w: WeightLookup, m: Projection): Tensor {
    const weight = w(`${m.name}.weight`);
    if (!this.fill || !m.transB || w.lora?.(m.name) || isHalf(weight.dtype)) {
      return project(this.x, w, m);
    }
    const { eps, weightOffset } = this.fill;
    const prologue = { kind: "rms_norm", eps, weightOffset } as const;
    const y = prologueMatmul(this.h, this.fill.weight, weight, prologue, { transB: true });
    return m.bias ? add(y, w(`${m.name}.bias`)) : y;
  }
}

/** The gated MLP's modules, as the fused paths take them. */
export interface GatedMlp {
  gate: Projection;
  up: Projection;
  down: Projection;
}

/** The storage format the weights share, or undefined where they differ. */
function storageFormat(weights: readonly Tensor[]): WeightFormat | undefined {
  const dtype = weights[0].dtype;
  if (weights.some((t) => t.dtype !== dtype)) return undefined;
  return isHalf(dtype) ? dtype : dtype === "f32" ? "f32" : undefined;
}

/** The fused paths one graph takes, decided once from the description and the build options. */
export class BlockFusions {
  /** Norms before products are computed in the products' fills. */
  readonly #normsInFills: boolean;
  /** The gated activation is computed in the down product's fill, added into the stream. */
  readonly #activationInFill: boolean;
  /** Whether a gated MLP's norm, products and activation may run as one gemv (its format). */
  readonly #gatedGemv?: (format: WeightFormat) => boolean;
  /** Whether the attention's norm and q/k/v products may run as one gemv (rows' width, format). */
  readonly #qkvGemv?: (k: number, format: WeightFormat) => boolean;

  constructor(readonly cfg: ModelConfig, options: BuildOptions) {
    if (options.prologueProducts && !options.inference) {
      throw new Error("Cannot build prologue products into a graph that is differentiated");
    }
    const rmsNorm = cfg.norm.kind === "rms_norm";
    const gated = "gate" in cfg.names.mlpIn && !cfg.bias.mlp;
    const prologues = Boolean(options.prologueProducts) && rmsNorm;
    // The fills read rows four values at a time.
    this.#normsInFills = prologues && cfg.hiddenSize % 4 === 0;
    this.#activationInFill = prologues && gated && cfg.intermediateSize % 4 === 0 &&
      !cfg.names.postMlpNorm && (cfg.residualScale ?? 1) === 1;
    const gatedFits = rmsNorm && gated && Boolean(cfg.names.preMlpNorm) && options.gatedGemv;
    this.#gatedGemv = gatedFits
      ? (format) => gatedFits(cfg.intermediateSize, cfg.hiddenSize, format)
      : undefined;
    const { conv1d, qNorm, kNorm, preAttentionNorm } = cfg.names;
    const qkvFits = rmsNorm && !conv1d && !qNorm && !kNorm && Boolean(preAttentionNorm);
    this.#qkvGemv = qkvFits ? options.qkvGemv : undefined;
  }

  /** The output of the norm of `h` with weight `weight` that `compute` computes as a tensor. */
  normed(h: Tensor, compute: () => Tensor, weight?: Tensor): NormedInput {
    const { eps, weightOffset } = this.cfg.norm;
    const fill = this.#normsInFills && weight ? { weight, eps, weightOffset } : undefined;
    return new NormedInput(h, compute, fill);
  }

  /**
   * The MLP's activation f(gate) * up of the RMSNorm of `h` (weight `normWeight`) as one gemv, or
   * undefined where that path does not apply (then build the products).
   */
  gemvActivation(
    h: Tensor,
    w: WeightLookup,
    normWeight: Tensor,
    { gate, up }: GatedMlp,
  ): Tensor | undefined {
    if (!this.#gatedGemv || w.lora?.(gate.name) || w.lora?.(up.name)) return undefined;
    const weights = [w(`${gate.name}.weight`), w(`${up.name}.weight`)] as const;
    const format = storageFormat(weights);
    if (!format || !this.#gatedGemv(format)) return undefined;
    const { eps, weightOffset } = this.cfg.norm;
    const attrs = { eps, weightOffset, gate: this.cfg.activation };
    return normedGatedGemv(h, normWeight, ...weights, attrs);
  }

  /**
   * q, k and v side by side [..., (heads + 2 kvHeads) * headDim] of the RMSNorm of `h` (weight
   * `normWeight`) by the q/k/v `modules` (three, or a fused one) and their biases as one gemv, or
   * undefined where that path does not apply (then build the norm and the products).
   */
  qkvGemv(
    h: Tensor,
    w: WeightLookup,
    normWeight: Tensor,
    modules: readonly Projection[],
  ): Tensor | undefined {
    if (!this.#qkvGemv || modules.some((m) => w.lora?.(m.name))) return undefined;
    const weights = modules.map((m) => w(`${m.name}.weight`));
    const format = storageFormat(weights);
    if (!format || !this.#qkvGemv(h.lastDim, format)) return undefined;
    const biased = modules.map((m) => m.bias);
    if (biased.some((b) => b !== biased[0])) return undefined;
    const biases = biased[0] ? modules.map((m) => w(`${m.name}.bias`)) : undefined;
    if (biases?.some((b) => b.dtype !== "f32")) return undefined;
    const { eps, weightOffset } = this.cfg.norm;
    return normedQkvGemv(h, normWeight, weights, biases, { eps, weightOffset });
  }

  /**
   * `h + down(f(gate) * up)` with the activation computed in the down product's fill and the
   * product added in place, or undefined where that path does not apply.
   */
  downWithActivation(
    h: Tensor,
    w: WeightLookup,
    gate: Tensor,
    up: Tensor,
    down: Projection,
  ): Tensor | undefined {
    const weight = w(`${down.name}.weight`);
    if (!this.#activationInFill || w.lora?.(down.name) || isHalf(weight.dtype)) return undefined;
    const activation = { kind: "gated", gate: this.cfg.activation } as const;
    return prologueMatmulAccumulate(h, gate, up, weight, activation, { transB: true });
  }
}
