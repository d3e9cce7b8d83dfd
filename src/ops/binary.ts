/**
 * Element-wise binary ops (add, sub, mul, div) with broadcasting (see `broadcast.ts`), and
 * their backward as graph ops. f32 only.
 * Shader: shaders/binary.wgsl
 * Reference: src/reference/elementwise.ts
 * Test: tests/ops/elementwise_test.ts
 */

import { grid1d } from "../gpu/dispatch.ts";
import { packParams } from "../gpu/kernel_params.ts";
import type { OpDef } from "../graph/op.ts";
import type { Tensor } from "../graph/tensor.ts";
import { broadcastLayout, broadcastShape, sumTo } from "./broadcast.ts";
import { neg } from "./unary.ts";
import { binaryRef } from "../reference/elementwise.ts";

/** The binary ops, in the order of the shader's `OP` codes. */
export const BINARY_OPS = ["add", "sub", "mul", "div"] as const;
/** One of {@link BINARY_OPS}. */
export type BinaryKind = typeof BINARY_OPS[number];

const WG = 256;

function binaryOp(kind: BinaryKind): OpDef<null> {
  return {
    name: kind,
    output([a, b]) {
      if (a.dtype !== "f32" || b.dtype !== "f32") {
        throw new Error(`Cannot ${kind} ${a} and ${b}: only f32 is supported`);
      }
      const shape = broadcastShape(a.shape, b.shape);
      broadcastLayout(a.shape, shape);
      broadcastLayout(b.shape, shape);
      return { shape, dtype: "f32" };
    },
    launch(_ctx, [a, b], out) {
      const shape = out.tensor.shape;
      const la = broadcastLayout(a.tensor.shape, shape);
      const lb = broadcastLayout(b.tensor.shape, shape);
      const n = out.tensor.size;
      return [{
        spec: {
          shader: "binary",
          entryPoint: "main",
          constants: {
            OP: BINARY_OPS.indexOf(kind),
            WG,
            SAME_A: Number(la.n === n && la.inner === 1),
            SAME_B: Number(lb.n === n && lb.inner === 1),
          },
          bindings: ["read", "read", "read_write"],
          params: true,
        },
        buffers: [a.buffer, b.buffer, out.buffer],
        params: packParams({ n, n_a: la.n, inner_a: la.inner, n_b: lb.n, inner_b: lb.inner }),
        workgroups: grid1d(Math.ceil(n / WG)),
      }];
    },
    reference: ([a, b], [at, bt]) => binaryRef(kind, a, at.shape, b, bt.shape).data,
    backward(g, [a, b], out) {
      switch (kind) {
        case "add":
          return [sumTo(g, a.shape), sumTo(g, b.shape)];
        case "sub":
          return [sumTo(g, a.shape), sumTo(neg(g), b.shape)];
        case "mul":
          return [sumTo(mul(g, b), a.shape), sumTo(mul(g, a), b.shape)];
        case "div":
          return [sumTo(div(g, b), a.shape), sumTo(neg(div(mul(g, out), b)), b.shape)];
      }
    },
  };
}

const OPS: Record<BinaryKind, OpDef<null>> = {
  add: binaryOp("add"),
  sub: binaryOp("sub"),
  mul: binaryOp("mul"),
  div: binaryOp("div"),
};

/** Applies binary op `kind` to `a` and `b` with broadcasting. */
export function binary(kind: BinaryKind, a: Tensor, b: Tensor): Tensor {
  return a.graph.apply(OPS[kind], [a, b], null);
}

/** `a + b` (broadcasting). */
export const add = (a: Tensor, b: Tensor): Tensor => binary("add", a, b);
/** `a - b` (broadcasting). */
export const sub = (a: Tensor, b: Tensor): Tensor => binary("sub", a, b);
/** `a * b` (broadcasting). */
export const mul = (a: Tensor, b: Tensor): Tensor => binary("mul", a, b);
/** `a / b` (broadcasting). */
export const div = (a: Tensor, b: Tensor): Tensor => binary("div", a, b);
