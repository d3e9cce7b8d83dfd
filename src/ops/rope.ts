/**
 * Rotary position embedding (RoPE) with HF's rotate-half convention, on x of shape
 * [batch, seq, heads, head_dim] (any leading dimensions: [..., heads, head_dim]) with integer
 * positions of x's shape without its last two dimensions ([batch, seq]), so packed sequences
 * and KV-cache offsets are just position values. The rotation's inverse frequencies are a table
 * the caller gives (`ropeInvFreq` for HF's default RoPE; `src/model/rope_scaling.ts` for the
 * linear, llama3 and yarn variants), so every variant is one kernel; no partial rotary dimension.
 * Shader: shaders/rope.wgsl
 * Reference: src/reference/rope.ts
 * Test: tests/ops/rope_test.ts
 */

import { grid1d } from "../gpu/dispatch.ts";
import { packParams } from "../gpu/kernel_params.ts";
import type { LaunchContext, OpDef } from "../graph/op.ts";
import { formatShape, sameShape, type Tensor } from "../graph/tensor.ts";
import { ropeRef } from "../reference/rope.ts";

/** Attributes of the rope ops. */
export interface RopeAttrs {
  /** The inverse frequency of each pair i < head_dim / 2 (f32, as HF's `inv_freq`). */
  invFreq: Float32Array<ArrayBuffer>;
}

/**
 * HF's f32 inverse frequencies for `headDim` (even): `1 / theta^(2i / headDim)` for
 * i < headDim / 2, rounded to f32 after each step as torch computes it in f32
 * (`arange(0, dim, 2).float() / dim`, then `base ** that`, then `1.0 / that`).
 */
export function ropeInvFreq(theta: number, headDim: number): Float32Array<ArrayBuffer> {
  const out = new Float32Array(headDim / 2);
  for (let i = 0; i < out.length; i++) {
    const exponent = Math.fround((2 * i) / headDim);
    out[i] = 1 / Math.fround(Math.fround(theta) ** exponent);
  }
  return out;
}

/** A scratch buffer of the launch holding an inverse-frequency table, named `label`. */
export function invFreqBuffer(
  ctx: LaunchContext,
  table: Float32Array<ArrayBuffer>,
  label: string,
): GPUBuffer {
  const buffer = ctx.scratch(table.byteLength, label);
  ctx.gpu.device.queue.writeBuffer(buffer, 0, table);
  return buffer;
}

/**
 * Throws (naming op `op` applied to `x`) unless `invFreq` holds a finite frequency >= 0 for each
 * of the `headDim / 2` pairs of an even `headDim`.
 */
export function checkInvFreq(op: string, x: Tensor, invFreq: Float32Array, headDim: number): void {
  if (headDim % 2 !== 0 || invFreq.length !== headDim / 2 || !invFreq.every((f) => f >= 0)) {
    throw new Error(
      `Cannot apply "${op}" to ${x}: expected an even head_dim and ${
        headDim / 2
      } finite inverse frequencies >= 0, received ${invFreq.length}`,
    );
  }
}

/**
 * Threads per workgroup: 64, so that a decode step's few tokens still spread over the threads of
 * a CPU adapter (one workgroup per thread at a time).
 */
const WG = 64;

/** The rotation by +angle (`inverse` false, rope itself) or -angle (its gradient). */
function ropeOp(inverse: boolean): OpDef<RopeAttrs> {
  const name = inverse ? "rope_inverse" : "rope";
  return {
    name,
    output([x, positions]) {
      if (x.dtype !== "f32" || x.rank < 2 || x.lastDim % 2 !== 0) {
        throw new Error(
          `Cannot apply "${name}" to ${x}: expected an f32 tensor [..., heads, head_dim] with an even head_dim`,
        );
      }
      const posShape = x.shape.slice(0, -2);
      if (positions.dtype === "f32" || !sameShape(positions.shape, posShape)) {
        throw new Error(
          `Cannot apply "${name}" to ${x}: expected i32 or u32 positions of shape ${
            formatShape(posShape)
          }, received ${positions}`,
        );
      }
      return { shape: x.shape, dtype: "f32" };
    },
    launch(ctx, [x, positions], out, attrs) {
      const headDim = x.tensor.lastDim;
      const heads = x.tensor.shape[x.tensor.rank - 2];
      const invFreq = invFreqBuffer(ctx, attrs.invFreq, `${name}_inv_freq`);
      const pairs = x.tensor.size / 2;
      // Four frequencies per thread where a head's half splits into quads.
      const quads = headDim % 8 === 0;
      return [{
        spec: {
          shader: "rope",
          entryPoint: quads ? "main4" : "main",
          constants: { INVERSE: Number(inverse), WG },
          bindings: ["read", "read", "read", "read_write"],
          params: true,
        },
        buffers: [x.buffer, positions.buffer, invFreq, out.buffer],
        params: packParams({ pairs, half: headDim / 2, token_pairs: heads * headDim / 2 }),
        workgroups: grid1d(Math.ceil(pairs / heads / (quads ? 4 : 1) / WG)),
      }];
    },
    // The inverse rotation is the rotation at the negated positions (an exact f32 negation).
    reference: ([x, positions], [xt], { invFreq }) =>
      ropeRef(
        x,
        inverse ? Array.from(positions, (p) => -p) : positions,
        xt.shape[xt.rank - 2],
        xt.lastDim,
        invFreq,
      ),
    backward(grad, [, positions], _out, attrs) {
      // A rotation's transpose is the opposite rotation; positions get no gradient.
      return [grad.graph.apply(inverse ? ROPE : ROPE_INVERSE, [grad, positions], attrs), null];
    },
  };
}

const ROPE = ropeOp(false);
const ROPE_INVERSE = ropeOp(true);

/**
 * Rotary position embedding of `x` [..., heads, head_dim] (e.g. [batch, seq, heads, head_dim])
 * at integer `positions` (i32 or u32, x's shape without the last two dimensions, e.g.
 * [batch, seq]), as HF's rotary embedding + apply_rotary_pos_emb: with half = head_dim / 2 and
 * i < half, angle = pos * invFreq[i] and `out[i] = x[i] cos - x[i + half] sin`,
 * `out[i + half] = x[i + half] cos + x[i] sin`. `invFreq` is HF's f32 table ({@link ropeInvFreq}
 * for the default RoPE) and the angle one f32 product, as HF's f32 `inv_freq @ position_ids`;
 * positions must be below 2^24 in magnitude to convert to f32 exactly. cos and sin are taken
 * after an accurate reduction of the angle to [-pi, pi] (see `shaders/rope.wgsl`), close to
 * torch's f32 cos and sin for angles up to ~4e5. Differentiable in x only.
 */
export function rope(x: Tensor, positions: Tensor, invFreq: Float32Array<ArrayBuffer>): Tensor {
  checkInvFreq("rope", x, invFreq, x.lastDim);
  return x.graph.apply(ROPE, [x, positions], { invFreq });
}
