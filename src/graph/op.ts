/**
 * The contract every graph op fulfils: infer its output, produce the kernel launches that
 * compute it, and (for differentiable ops) express its input gradients as more graph ops.
 * Ops live in `src/ops/`; the graph runtime knows none of them by name.
 */

import type { GpuContext } from "../gpu/device.ts";
import type { BindingArg, LaunchCommands } from "../gpu/dispatch.ts";
import type { PackedParams } from "../gpu/kernel_params.ts";
import type { KernelSpec } from "../gpu/kernel_spec.ts";
import type { DType, HostData, Tensor } from "./tensor.ts";

/** Shape and dtype of an op's output. */
export interface OutputSpec {
  shape: readonly number[];
  dtype: DType;
}

/** A tensor with the GPU buffer an executable gave it. */
export interface BoundTensor {
  tensor: Tensor;
  buffer: GPUBuffer;
}

/**
 * One kernel launch an op asks for. `before` (from {@link LaunchCommands}) holds commands
 * recorded right before it in every run, outside any compute pass (e.g. `copyBufferToTexture` of
 * its operands into textures from {@link LaunchContext.texture}); `copyVariables` the copies of
 * operands that {@link LaunchContext.isConstantVariable} says are variables this graph never
 * writes, which runs may skip while the variables are unchanged. A launch with either ends the
 * compute pass the runtime has open and begins a new one.
 */
export interface KernelLaunch extends LaunchCommands {
  spec: KernelSpec;
  /** One per binding of `spec`: a buffer for a storage binding, a view for a texture binding. */
  buffers: readonly BindingArg[];
  /** The uniform params (from `packParams`), checked against the shader's struct. */
  params?: PackedParams;
  workgroups: readonly [number, number, number];
}

/** What an op may use while producing its launches. */
export interface LaunchContext {
  gpu: GpuContext;
  /** A scratch buffer that lives as long as the executable. */
  scratch(bytes: number, label: string): GPUBuffer;
  /**
   * A texture for this op's launches alone: they must fill it before reading it, every run,
   * since later ops of the graph may get the same texture (same descriptor) for their own use.
   * Distinct within one op; destroyed with the executable.
   */
  texture(descriptor: GPUTextureDescriptor, label: string): GPUTexture;
  /**
   * A texture of `descriptor`'s shape for copies of the buffer of a variable the graph never
   * writes ({@link isConstantVariable}) laid out as `layout` names, shared with every other
   * launch and executable that copies the same buffer into the same shape and layout
   * (`GpuContext.variableTextures`; held as long as the executable). `copied`: an earlier launch
   * of this executable records the copy, so this one need not.
   */
  variableTexture(
    source: GPUBuffer,
    descriptor: GPUTextureDescriptor,
    label: string,
    layout: string,
  ): { texture: GPUTexture; copied: boolean };
  /**
   * A texture of `descriptor`'s shape for a copy of the op input bound to `source`, laid out as
   * `layout` names, shared with the later ops of this graph that copy the same input tensor into
   * the same shape and layout, up to its last reader (e.g. the q, k and v products of one
   * activation); `copied`: an earlier op fills it in every run, ahead of this one. A `source` that
   * is no input of the op gets a texture for this op alone, as {@link texture}.
   */
  inputTexture(
    source: GPUBuffer,
    descriptor: GPUTextureDescriptor,
    label: string,
    layout: string,
  ): { texture: GPUTexture; copied: boolean };
  /**
   * Whether `t` is a variable's data (directly or through views) that this graph never writes:
   * copies of it made before a launch can go in `copyVariables`.
   */
  isConstantVariable(t: Tensor): boolean;
}

/**
 * Takes the gradient terms of the tensors it `takes` one at a time, as autodiff makes them, in
 * place of one summed gradient: e.g. each term added into a gradient accumulator by the op that
 * computes it. `add` returns the running result (ops ordered after it see the term added).
 */
export interface GradientSink {
  takes(t: Tensor): boolean;
  /** Adds `term` to `t`'s result, ordered after the tensors `after`; returns the result so far. */
  add(t: Tensor, term: Tensor, after?: readonly Tensor[]): Tensor;
}

/** What autodiff hands an op's backward besides its gradient (regions it replays pass it on). */
export interface BackwardContext {
  sink?: GradientSink;
}

/** A graph op. `A` is its attribute type (static, known at build time). */
export interface OpDef<A> {
  /** Name used in labels and errors. */
  readonly name: string;
  /** Checks the inputs and returns the output's shape and dtype; throws on a mismatch. */
  output(inputs: readonly Tensor[], attrs: A): OutputSpec;
  /**
   * When set, the output shares the storage of input `aliasOf` (a view such as reshape) and
   * `launch` is not called.
   */
  readonly aliasOf?: number;
  /**
   * When set, the output is input `inPlace` updated in place: it shares that input's storage
   * and `launch` writes into it (e.g. appending to a KV cache held in a variable). Readers of
   * the output run after the write; readers of the original input must not be scheduled after
   * it, so take the input only from the op that last wrote it.
   */
  readonly inPlace?: number;
  /**
   * Inputs (by index: variables or graph inputs) that `launch` also updates in place, besides its output
   * (e.g. the KV caches a fused RoPE step writes while it outputs the rotated queries). The graph
   * does not see those writes: readers of the updated data must take it through a view that also
   * depends on this op's output (an `aliasOf` op with this op's output as a second input), and
   * readers of the data before the write must not be scheduled after it.
   */
  readonly writes?: readonly number[];
  /** Kernel launches that compute `output` from `inputs`. */
  launch(
    ctx: LaunchContext,
    inputs: readonly BoundTensor[],
    output: BoundTensor,
    attrs: A,
  ): KernelLaunch[] | Promise<KernelLaunch[]>;
  /**
   * CPU reference of the output (row-major values) from the inputs' `data`, for validate mode
   * (`RFT_VALIDATE=1`, `validate.ts`). Absent where none is wired: the op then runs unchecked.
   */
  reference?(data: readonly HostData[], inputs: readonly Tensor[], attrs: A): ArrayLike<number>;
  /**
   * Gradients of the inputs given the output's gradient, as graph tensors (null where an input
   * gets none, e.g. integer indices). Absent for ops that are not differentiable. `context`
   * matters only to ops that run autodiff themselves (a checkpointed region).
   */
  backward?(
    grad: Tensor,
    inputs: readonly Tensor[],
    output: Tensor,
    attrs: A,
    context?: BackwardContext,
  ): readonly (Tensor | null)[];
}
