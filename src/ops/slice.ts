/**
 * `sliceLast`: a window of columns along the last axis (e.g. splitting GPT-2's fused qkv
 * projection), and its adjoint `padLast` (the window placed back among zeros). f32 only; other
 * axes are not supported.
 * Shader: shaders/slice.wgsl
 * Reference: src/reference/slice.ts
 * Test: tests/ops/slice_test.ts
 */

import { grid1d } from "../gpu/dispatch.ts";
import { packParams } from "../gpu/kernel_params.ts";
import type { KernelLaunch, OpDef } from "../graph/op.ts";
import type { Tensor } from "../graph/tensor.ts";
import { padLastRef, sliceLastRef } from "../reference/slice.ts";

/** The window: columns [start, start + width) of a last axis of `wide` columns. */
interface Window {
  start: number;
  width: number;
  wide: number;
}

const WG = 256;

function windowLaunch(
  entryPoint: "slice" | "pad",
  src: GPUBuffer,
  out: { buffer: GPUBuffer; tensor: Tensor },
  { start, width, wide }: Window,
): KernelLaunch[] {
  const rows = out.tensor.size / out.tensor.lastDim;
  return [{
    spec: {
      shader: "slice",
      entryPoint,
      constants: { WG },
      bindings: ["read", "read_write"],
      params: true,
    },
    buffers: [src, out.buffer],
    params: packParams({ rows, wide, narrow: width, start }),
    workgroups: grid1d(Math.ceil(out.tensor.size / WG)),
  }];
}

function checkWindow(op: string, x: Tensor, cols: number, w: Window): void {
  const ok = x.dtype === "f32" && x.rank >= 1 && Number.isInteger(w.start) && w.start >= 0 &&
    Number.isInteger(w.width) && w.width > 0 && w.start + w.width <= w.wide && x.lastDim === cols;
  if (!ok) {
    throw new Error(
      `Cannot apply "${op}" to ${x}: expected an f32 tensor with ${cols} columns and a window ` +
        `[${w.start}, ${w.start + w.width}) inside ${w.wide} columns`,
    );
  }
}

const PAD_LAST: OpDef<Window> = {
  name: "pad_last",
  output([x], w) {
    checkWindow("pad_last", x, w.width, w);
    return { shape: [...x.shape.slice(0, -1), w.wide], dtype: "f32" };
  },
  launch: (_ctx, [x], out, w) => windowLaunch("pad", x.buffer, out, w),
  reference: ([x], _inputs, w) => padLastRef(x, w.width, w.start, w.wide),
  backward: (grad, _inputs, _out, w) => [sliceLast(grad, w.start, w.width)],
};

const SLICE_LAST: OpDef<Window> = {
  name: "slice_last",
  output([x], w) {
    checkWindow("slice_last", x, w.wide, w);
    return { shape: [...x.shape.slice(0, -1), w.width], dtype: "f32" };
  },
  launch: (_ctx, [x], out, w) => windowLaunch("slice", x.buffer, out, w),
  reference: ([x], _inputs, w) => sliceLastRef(x, w.wide, w.start, w.width),
  backward: (grad, _inputs, _out, w) => [padLast(grad, w.start, w.wide)],
};

/** Columns [start, start + width) of the last axis of `x`. */
export function sliceLast(x: Tensor, start: number, width: number): Tensor {
  return x.graph.apply(SLICE_LAST, [x], { start, width, wide: x.lastDim });
}

/** `x` placed at columns [start, start + x.lastDim) of a last axis of `wide` zeros. */
export function padLast(x: Tensor, start: number, wide: number): Tensor {
  return x.graph.apply(PAD_LAST, [x], { start, width: x.lastDim, wide });
}
