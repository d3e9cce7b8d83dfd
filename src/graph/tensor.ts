/**
 * Symbolic tensors of a graph: a shape, a dtype and the node that produces them. A tensor holds
 * no data; an executable compiled from the graph owns the GPU buffers.
 */

import type { Graph } from "./graph.ts";
import type { OpDef } from "./op.ts";
import { fromBf16, fromF16 } from "../util/half.ts";

/**
 * Element types a graph tensor can have: 4-byte f32, i32 and u32, and the half-precision weight
 * types bf16 and f16, stored two per 32-bit word (element 2i in the low half of word i, the
 * safetensors byte order) and read by the kernels that accept them with f32 arithmetic.
 */
export type DType = "f32" | "i32" | "u32" | "bf16" | "f16";

/** Bytes per element of each dtype. */
export const DTYPE_BYTES: Readonly<Record<DType, number>> = {
  f32: 4,
  i32: 4,
  u32: 4,
  bf16: 2,
  f16: 2,
};

/** Whether `dtype` is a half-precision weight type (bf16, f16). */
export function isHalf(dtype: DType): dtype is "bf16" | "f16" {
  return DTYPE_BYTES[dtype] === 2;
}

/** Bytes of data of `shape` and `dtype`, whole 32-bit words (a half tensor's last word padded). */
export function dataBytes(shape: readonly number[], dtype: DType): number {
  return Math.ceil(shapeSize(shape) * DTYPE_BYTES[dtype] / 4) * 4;
}

/** Host-side tensor data of any rft dtype (half types widened to f32). */
export type HostData =
  | Float32Array<ArrayBuffer>
  | Int32Array<ArrayBuffer>
  | Uint32Array<ArrayBuffer>;

/**
 * `bytes` read back from a tensor of `dtype`, as the typed array of that dtype; half types come
 * back widened to f32 (the first `size` elements).
 */
export function hostDataOf(bytes: ArrayBuffer, dtype: DType, size?: number): HostData {
  if (dtype === "bf16" || dtype === "f16") {
    const n = size ?? bytes.byteLength / 2;
    const halves = new Uint16Array(bytes, 0, n);
    return dtype === "bf16" ? fromBf16(halves) : fromF16(halves);
  }
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

  /** Bytes of its data (whole 32-bit words). */
  get bytes(): number {
    return dataBytes(this.shape, this.dtype);
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
