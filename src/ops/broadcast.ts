/**
 * Broadcasting rules shared by the element-wise ops, and `sumTo`, the op that reduces a
 * broadcast gradient back to its operand's shape. An operand broadcasts when, right-aligned
 * against the output, its dimensions other than 1 form one contiguous block equal to the
 * output's (e.g. [C] or [R,1] against [R,C]); it is then read as (outer, n, inner).
 * Shaders: shaders/expand.wgsl, shaders/sum_to.wgsl
 * Reference: src/reference/elementwise.ts
 * Test: tests/ops/elementwise_test.ts
 */

import { grid1d } from "../gpu/dispatch.ts";
import { packParams } from "../gpu/kernel_params.ts";
import type { OpDef } from "../graph/op.ts";
import { formatShape, sameShape, shapeSize, type Tensor } from "../graph/tensor.ts";
import { expandToRef, sumToRef } from "../reference/elementwise.ts";

/** How an operand maps onto the output: index = (i / inner) % n. */
export interface BroadcastLayout {
  outer: number;
  n: number;
  inner: number;
}

/** Output shape of broadcasting `a` with `b` (numpy rules); throws when they do not fit. */
export function broadcastShape(a: readonly number[], b: readonly number[]): number[] {
  const rank = Math.max(a.length, b.length);
  const out: number[] = [];
  for (let i = 0; i < rank; i++) {
    const da = a[a.length - rank + i] ?? 1;
    const db = b[b.length - rank + i] ?? 1;
    if (da !== db && da !== 1 && db !== 1) {
      throw new Error(`Cannot broadcast ${formatShape(a)} with ${formatShape(b)}`);
    }
    out.push(Math.max(da, db));
  }
  return out;
}

/** The (outer, n, inner) layout of `operand` against `out`; throws for unsupported patterns. */
export function broadcastLayout(
  operand: readonly number[],
  out: readonly number[],
): BroadcastLayout {
  const padded = [...Array(out.length - operand.length).fill(1), ...operand];
  const kept = padded.map((d, i) => d !== 1 && d === out[i]);
  const first = kept.indexOf(true);
  const last = kept.lastIndexOf(true);
  const block = first < 0 ? [] : padded.slice(first, last + 1);
  if (first >= 0 && !block.every((d, k) => d === out[first + k])) {
    throw new Error(
      `Cannot broadcast ${formatShape(operand)} to ${formatShape(out)}: ` +
        "only one contiguous block of kept dimensions is supported",
    );
  }
  const n = shapeSize(block);
  const inner = first < 0 ? 1 : shapeSize(out.slice(last + 1));
  return { outer: shapeSize(out) / (n * inner), n, inner };
}

const SUM_TO_WG = 64;

const SUM_TO: OpDef<{ shape: readonly number[] }> = {
  name: "sum_to",
  output([x], { shape }) {
    broadcastLayout(shape, x.shape);
    return { shape, dtype: "f32" };
  },
  launch(_ctx, [x], out, { shape }) {
    const { outer, n, inner } = broadcastLayout(shape, x.tensor.shape);
    return [{
      spec: {
        shader: "sum_to",
        entryPoint: "main",
        constants: { WG: SUM_TO_WG },
        bindings: ["read", "read_write"],
        params: true,
      },
      buffers: [x.buffer, out.buffer],
      params: packParams({ outer, n, inner }),
      workgroups: grid1d(n),
    }];
  },
  reference: ([x], [xt], { shape }) => sumToRef(x, xt.shape, shape),
  backward(grad, [x]) {
    return [expandTo(grad, x.shape)];
  },
};

/** Sums `x` over the dimensions where `shape` broadcasts (the adjoint of broadcasting). */
export function sumTo(x: Tensor, shape: readonly number[]): Tensor {
  if (sameShape(x.shape, shape)) return x;
  return x.graph.apply(SUM_TO, [x], { shape });
}

const EXPAND_WG = 256;

const EXPAND: OpDef<{ shape: readonly number[] }> = {
  name: "expand",
  output([x], { shape }) {
    broadcastLayout(x.shape, shape);
    return { shape, dtype: "f32" };
  },
  launch(_ctx, [x], out, { shape }) {
    const { n, inner } = broadcastLayout(x.tensor.shape, shape);
    const total = shapeSize(shape);
    return [{
      spec: {
        shader: "expand",
        entryPoint: "main",
        constants: { WG: EXPAND_WG },
        bindings: ["read", "read_write"],
        params: true,
      },
      buffers: [x.buffer, out.buffer],
      params: packParams({ total, n, inner }),
      workgroups: grid1d(Math.ceil(total / EXPAND_WG)),
    }];
  },
  reference: ([x], [xt], { shape }) => expandToRef(x, xt.shape, shape),
  backward(grad, [x]) {
    return [sumTo(grad, x.shape)];
  },
};

/** `x` broadcast to `shape` (the adjoint of {@link sumTo}). */
export function expandTo(x: Tensor, shape: readonly number[]): Tensor {
  if (sameShape(x.shape, shape)) return x;
  return x.graph.apply(EXPAND, [x], { shape });
}
