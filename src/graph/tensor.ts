/**
 * Symbolic tensors of a graph: a shape, a dtype and the node that produces them. A tensor holds
 * no data; an executable compiled from the graph owns the GPU buffers.
 */

import type { Graph } from "./graph.ts";
import type { OpDef } from "./op.ts";

/** Element types a graph tensor can have (4 bytes each). */
export type DType = "f32" | "i32" | "u32";

/** Bytes per element of every dtype rft graphs use. */
export const BYTES_PER_ELEMENT = 4;

/** Host-side tensor data of any rft dtype. */
export type HostData =
  | Float32Array<ArrayBuffer>
  | Int32Array<ArrayBuffer>
  | Uint32Array<ArrayBuffer>;

/** `bytes` read back from a tensor of `dtype`, as the typed array of that dtype. */
export function hostDataOf(bytes: ArrayBuffer, dtype: DType): HostData {
  return dtype === "f32"
    ? new Float32Array(bytes)
    : dtype === "i32"
    ? new Int32Array(bytes)
    : new Uint32Array(bytes);
}

/** How a tensor comes to exist. */
export type TensorSource =
  | { kind: "input" }
  | { kind: "variable"; variable: Variable }
  | { kind: "constant"; data: HostData }
  // deno-lint-ignore no-explicit-any
  | { kind: "op"; op: OpDef<any>; inputs: readonly Tensor[]; attrs: unknown };

/** A node of a graph. */
export class Tensor {
  constructor(
    readonly graph: Graph,
    readonly id: number,
    readonly shape: readonly number[],
    readonly dtype: DType,
    readonly source: TensorSource,
    public name: string,
  ) {}

  /** Number of elements. */
  get size(): number {
    return shapeSize(this.shape);
  }

  /** Number of dimensions. */
  get rank(): number {
    return this.shape.length;
  }

  /** Size of the last dimension (1 for scalars). */
  get lastDim(): number {
    return this.shape.length ? this.shape[this.shape.length - 1] : 1;
  }

  /** `name[2,3]:f32`, for messages. */
  toString(): string {
    return `${this.name}[${this.shape.join(",")}]:${this.dtype}`;
  }
}

/** A GPU buffer that outlives graphs (weights, optimizer state), bound into graphs by reference. */
export interface Variable {
  readonly name: string;
  readonly shape: readonly number[];
  readonly dtype: DType;
  readonly buffer: GPUBuffer;
}

/** Product of the dimensions. */
export function shapeSize(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** Whether two shapes are equal. */
export function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/** `[2,3]`, for messages. */
export function formatShape(shape: readonly number[]): string {
  return `[${shape.join(",")}]`;
}
