/**
 * AdamW (PyTorch semantics: decoupled weight decay, bias-corrected moments) on the GPU: an
 * in-place graph op per parameter (`shaders/adamw.wgsl`) that reads the learning rate and bias
 * corrections from a small step-state buffer the host rewrites before each run, so one compiled
 * training graph serves every step. Owns the moment buffers: f32, or bf16 (`momentsDtype`: half
 * the optimizer's bytes, 4 of the 16 per parameter; updated in f32, stored rounded). No AMSGrad,
 * no fused multi-tensor launch, no f16/bf16 parameters or master weights.
 * Shader: shaders/adamw.wgsl
 * Reference: src/reference/adamw.ts
 * Test: tests/trainer/adamw_test.ts
 */

import type { GpuContext } from "../gpu/device.ts";
import { TENSOR_USAGE } from "../gpu/buffer_pool.ts";
import { grid1d } from "../gpu/dispatch.ts";
import { packParams } from "../gpu/kernel_params.ts";
import { readVariablePieces, readVariables } from "../graph/read_variables.ts";
import { toBf16 } from "../util/half.ts";
import type { OpDef } from "../graph/op.ts";
import {
  dataBytes,
  type DType,
  formatShape,
  sameShape,
  shapeSize,
  type Tensor,
  type Variable,
} from "../graph/tensor.ts";

const WG = 256;

/** Hyper-parameters of {@link AdamW}; the learning rate comes with each `beginStep`. */
export interface AdamWOptions {
  /** (beta1, beta2), default (0.9, 0.999). */
  betas?: readonly [number, number];
  /** Added to sqrt(v_hat), default 1e-8. */
  eps?: number;
  /** Decoupled weight decay, default 0.01 (PyTorch's default). */
  weightDecay?: number;
  /** Parameters (by name) that get no weight decay, e.g. norms and biases. */
  noDecay?: (name: string) => boolean;
  /** How the moments are stored (`algorithm.optimizer.moments_dtype`): float32 (default) or bfloat16. */
  momentsDtype?: "float32" | "bfloat16";
}

/** rft's no-decay rule: biases and norm weights get no weight decay (as in most recipes). */
export function defaultNoDecay(name: string): boolean {
  return name.endsWith(".bias") || /norm|ln_/.test(name);
}

/** Host copy of an {@link AdamW}'s state, for checkpoints. */
export interface AdamWState {
  /** Optimizer steps taken (t of the bias corrections). */
  step: number;
  /** First and second moments (PyTorch's exp_avg, exp_avg_sq) by parameter name. */
  moments: Map<string, { m: Float32Array<ArrayBuffer>; v: Float32Array<ArrayBuffer> }>;
}

/** Static attributes of one adamw update op. */
interface AdamWAttrs {
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
}

const ADAMW: OpDef<AdamWAttrs> = {
  name: "adamw",
  inPlace: 0,
  output([param, grad, m, v, step, clip]) {
    if (param.dtype !== "f32") {
      throw new Error(`Cannot apply "adamw" to ${param}: expected an f32 parameter`);
    }
    const operands: [string, Tensor][] = [
      ["gradient", grad],
      ["first moment", m],
      ["second moment", v],
    ];
    for (const [what, t] of operands) {
      const dtypes = what === "gradient" ? ["f32"] : ["f32", "bf16"];
      if (!dtypes.includes(t.dtype) || !sameShape(t.shape, param.shape)) {
        throw new Error(
          `Cannot apply "adamw" to ${param}: expected an ${dtypes.join(" or ")} ${what} of shape ${
            formatShape(param.shape)
          }, received ${t}`,
        );
      }
    }
    if (step.dtype !== "f32" || !sameShape(step.shape, [3])) {
      throw new Error(
        `Cannot apply "adamw" to ${param}: expected an f32 step state of shape [3], received ${step}`,
      );
    }
    if (clip.dtype !== "f32" || !sameShape(clip.shape, [2])) {
      throw new Error(
        `Cannot apply "adamw" to ${param}: expected an f32 clip tensor [norm, scale] of shape [2], received ${clip}`,
      );
    }
    return { shape: param.shape, dtype: "f32" };
  },
  launch(_ctx, [param, grad, m, v, step, clip], out, a) {
    const n = param.tensor.size;
    const bf16 = m.tensor.dtype === "bf16";
    return [{
      spec: {
        shader: "adamw",
        entryPoint: "main",
        constants: { WG, ...(bf16 ? { MOMENTS_BF16: 1 } : {}) },
        bindings: ["read", "uniform", "uniform", "read_write", "read_write", "read_write"],
        params: true,
      },
      buffers: [grad.buffer, step.buffer, clip.buffer, m.buffer, v.buffer, out.buffer],
      params: packParams({
        n,
        beta1: { f32: a.beta1 },
        one_minus_beta1: { f32: 1 - a.beta1 },
        beta2: { f32: a.beta2 },
        one_minus_beta2: { f32: 1 - a.beta2 },
        eps: { f32: a.eps },
        weight_decay: { f32: a.weightDecay },
      }),
      workgroups: grid1d(Math.ceil((bf16 ? Math.ceil(n / 2) : n) / WG)),
    }];
  },
};

/** A variable of `shape` (f32, or `dtype`) on a new zero-filled buffer, labelled `name`. */
export function zeroVariable(
  gpu: GpuContext,
  name: string,
  shape: readonly number[],
  dtype: DType = "f32",
): Variable {
  const buffer = gpu.device.createBuffer({
    label: name,
    size: Math.max(4, dataBytes(shape, dtype)),
    usage: TENSOR_USAGE,
  });
  return { name, shape, dtype, buffer };
}

/**
 * AdamW over a fixed list of parameter variables. Use: build the training graph, add
 * `update(grads, clipGradNorm(grads, maxNorm))` to its outputs, compile once; then before each
 * run call `beginStep(lr)`. The update ops write the parameters and moments in place.
 */
export class AdamW {
  readonly #gpu: GpuContext;
  readonly #moments: { m: Variable; v: Variable }[];
  /** The step-state variable [lr, 1 - beta1^t, 1 - beta2^t] the update kernels read. */
  readonly #stepState: Variable;
  readonly #beta1: number;
  readonly #beta2: number;
  readonly #eps: number;
  readonly #weightDecay: number;
  readonly #noDecay: (name: string) => boolean;
  #step = 0;

  constructor(
    gpu: GpuContext,
    readonly params: readonly Variable[],
    readonly options: AdamWOptions,
  ) {
    const [beta1, beta2] = options.betas ?? [0.9, 0.999];
    for (const [what, x] of [["beta1", beta1], ["beta2", beta2]] as const) {
      if (!(x >= 0 && x < 1)) {
        throw new Error(`Cannot create AdamW: expected ${what} in [0, 1), received ${x}`);
      }
    }
    const names = new Set<string>();
    for (const p of params) {
      if (p.dtype !== "f32") {
        throw new Error(`Cannot create AdamW: parameter "${p.name}" is ${p.dtype}, expected f32`);
      }
      if (names.has(p.name)) {
        throw new Error(`Cannot create AdamW: parameter name "${p.name}" appears twice`);
      }
      names.add(p.name);
    }
    this.#gpu = gpu;
    this.#beta1 = beta1;
    this.#beta2 = beta2;
    this.#eps = options.eps ?? 1e-8;
    this.#weightDecay = options.weightDecay ?? 0.01;
    this.#noDecay = options.noDecay ?? (() => false);
    const dtype = options.momentsDtype === "bfloat16" ? "bf16" : "f32";
    this.#moments = params.map((p) => ({
      m: zeroVariable(gpu, `${p.name}.exp_avg`, p.shape, dtype),
      v: zeroVariable(gpu, `${p.name}.exp_avg_sq`, p.shape, dtype),
    }));
    this.#stepState = zeroVariable(gpu, "adamw.step_state", [3]);
  }

  /** The buffers of the moments (for memory reports). */
  get stateBuffers(): GPUBuffer[] {
    return this.#moments.flatMap(({ m, v }) => [m.buffer, v.buffer]);
  }

  /** Optimizer steps begun so far (the t of the bias corrections of the last one). */
  get stepCount(): number {
    return this.#step;
  }

  /**
   * Appends one update per parameter to the graph of `grads` (`grads[i]` is the gradient of
   * `params[i]`, typically from `grad` over `graph.variable(params[i])`), scaling each gradient
   * by `clip`[1], the scale from `clipGradNorm`. Returns the updated parameters: in-place
   * results on the variables' buffers; make them outputs of the compiled graph. List the loss
   * and any metric that reads a parameter before these among the outputs, so they are scheduled
   * before the parameters change.
   */
  update(grads: readonly Tensor[], clip: Tensor): Tensor[] {
    if (grads.length !== this.params.length) {
      throw new Error(
        `Cannot apply AdamW: expected ${this.params.length} gradients, received ${grads.length}`,
      );
    }
    const g = clip.graph;
    const step = g.variable(this.#stepState);
    return this.params.map((p, i) =>
      g.apply(
        ADAMW,
        [
          g.variable(p),
          grads[i],
          g.variable(this.#moments[i].m),
          g.variable(this.#moments[i].v),
          step,
          clip,
        ],
        {
          beta1: this.#beta1,
          beta2: this.#beta2,
          eps: this.#eps,
          weightDecay: this.#noDecay(p.name) ? 0 : this.#weightDecay,
        },
      )
    );
  }

  /**
   * Starts the next optimizer step: t += 1 and writes [lr, 1 - beta1^t, 1 - beta2^t] for the
   * update kernels. Call once before each run of a graph holding `update`'s ops.
   */
  beginStep(lr: number): void {
    if (!Number.isFinite(lr) || lr < 0) {
      throw new Error(`Cannot begin AdamW step: expected a finite lr >= 0, received ${lr}`);
    }
    const t = ++this.#step;
    const state = Float32Array.of(lr, 1 - this.#beta1 ** t, 1 - this.#beta2 ** t);
    this.#gpu.device.queue.writeBuffer(this.#stepState.buffer, 0, state);
  }

  /**
   * Moment `which` (`m`: the first, `v`: the second) of parameter `i` as f32 pieces (widened
   * from bf16 ones), each read back when asked for: a checkpoint writer holds one piece at a time.
   */
  momentPieces(i: number, which: "m" | "v"): AsyncGenerator<Float32Array<ArrayBuffer>> {
    return readVariablePieces(this.#gpu.device, [this.#moments[i][which]]);
  }

  /** Reads the step count and both moments of every parameter (one readback). */
  async state(): Promise<AdamWState> {
    const read = await readVariables(this.#gpu.device, this.#moments.flatMap(({ m, v }) => [m, v]));
    const moments = new Map(
      this.params.map((p, i) => [p.name, {
        m: read.get(this.#moments[i].m.name)!,
        v: read.get(this.#moments[i].v.name)!,
      }]),
    );
    return { step: this.#step, moments };
  }

  /**
   * Restores a state from {@link state} (the same parameter names and sizes); the next
   * `beginStep` continues from its step count.
   */
  loadState(state: AdamWState): void {
    if (!Number.isInteger(state.step) || state.step < 0) {
      throw new Error(
        `Cannot load AdamW state: expected a step count >= 0, received ${state.step}`,
      );
    }
    const writes = this.params.map((p, i) => {
      const entry = state.moments.get(p.name);
      const size = shapeSize(p.shape);
      if (!entry || entry.m.length !== size || entry.v.length !== size) {
        throw new Error(
          `Cannot load AdamW state: expected moments of ${size} values for "${p.name}", received ${
            entry ? `${entry.m.length} and ${entry.v.length}` : "none"
          }`,
        );
      }
      return { moments: this.#moments[i], entry };
    });
    if (state.moments.size !== this.params.length) {
      throw new Error(
        `Cannot load AdamW state: expected moments of ${this.params.length} parameters, received ${state.moments.size}`,
      );
    }
    const { queue } = this.#gpu.device;
    // bf16 moments: whole 32-bit words (an odd count's last half zero).
    const stored = (values: Float32Array<ArrayBuffer>, target: Variable) => {
      if (target.dtype !== "bf16") return values;
      const bits = new Uint16Array(Math.ceil(values.length / 2) * 2);
      bits.set(toBf16(values));
      return bits;
    };
    for (const { moments, entry } of writes) {
      queue.writeBuffer(moments.m.buffer, 0, stored(entry.m, moments.m));
      queue.writeBuffer(moments.v.buffer, 0, stored(entry.v, moments.v));
      this.#gpu.variableTextures.written(moments.m.buffer);
      this.#gpu.variableTextures.written(moments.v.buffer);
    }
    this.#step = state.step;
  }

  /** Destroys the moment and step-state buffers (the parameters stay). */
  destroy(): void {
    for (const { m, v } of this.#moments) {
      m.buffer.destroy();
      v.buffer.destroy();
    }
    this.#stepState.buffer.destroy();
  }
}
