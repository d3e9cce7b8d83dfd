/**
 * Causal self-attention over packed or padded batches, with grouped-query attention and an
 * optional sliding window, in f32. The forward is an online softmax over key tiles (no [T, T]
 * score matrix) that also saves each query row's log-sum-exp: its op outputs both, packed, and
 * the attention output is a view of the first part, whose backward is the non-differentiable ops
 * `causal_attention_stats` (lse and delta = rowsum(dO * O), `shaders/attention_stats.wgsl`), dq
 * (iterating over keys) and dk with dv (iterating over queries, one op whose output holds both:
 * dk is a view of it, dv a copy of its second part), without atomics, so results are
 * deterministic. The kernels are the CPU adapters' register-blocked ones or the GPUs'
 * FlashAttention-2-style ones, chosen per adapter and shape (`attention_kernels.ts`). The head
 * dim is a runtime parameter: one pipeline per kernel serves every model. Scores soft-capped as
 * Gemma 2's take the register kernels. No dropout, ALiBi or KV cache (`cached_attention.ts`).
 * Shader: shaders/attention_stats.wgsl
 * Reference: src/reference/attention.ts
 * Test: tests/ops/attention_test.ts
 */

import { grid1d } from "../gpu/dispatch.ts";
import { packParams } from "../gpu/kernel_params.ts";
import type { BoundTensor, OpDef } from "../graph/op.ts";
import { formatShape, sameShape, type Tensor } from "../graph/tensor.ts";
import { attentionForwardRef } from "../reference/attention.ts";
import {
  type AttentionKernel,
  attentionLaunches,
  attentionOutElements,
  chooseAttentionKernel,
  dvOffset,
} from "./attention_kernels.ts";
import type { AttentionDims, AttentionEntry, AttentionJob } from "./attention_register.ts";
import { reshape } from "./reshape.ts";
import { sliceLast } from "./slice.ts";

/** Options of {@link causalAttention}. */
export interface AttentionOptions {
  /** Factor of q.k before the softmax; default 1 / sqrt(head_dim). */
  scale?: number;
  /**
   * Sliding window (HF's `sliding_window`): query t attends only to keys s with t - s < window.
   * Default 0: none.
   */
  window?: number;
  /**
   * Soft cap of the scores (Gemma 2's `attn_logit_softcapping`): each score s becomes
   * softcap * tanh(s / softcap) before the softmax. Default 0: none.
   */
  softcap?: number;
  /** Forces a kernel family (tests, benches); otherwise chosen per adapter and shape. */
  kernel?: AttentionKernel;
}

interface AttentionAttrs {
  scale: number;
  /** 0: none. */
  window: number;
  /** 0: none. */
  softcap: number;
  kernel?: AttentionKernel;
}

/** Checks q, k, v and the segment ids that every attention op (`op`) takes; returns the sizes. */
function attentionDims(
  op: string,
  q: Tensor,
  k: Tensor,
  v: Tensor,
  segmentIds: Tensor,
): AttentionDims {
  const fail = (expected: string, received: Tensor): never => {
    throw new Error(`Cannot apply "${op}" to ${q}: expected ${expected}, received ${received}`);
  };
  if (q.dtype !== "f32" || q.rank !== 4) {
    fail("f32 queries of shape [batch, seq, heads, head_dim]", q);
  }
  const [batch, seq, heads, headDim] = q.shape;
  const kvHeads = k.shape[2];
  if (
    k.dtype !== "f32" || k.rank !== 4 || k.shape[0] !== batch || k.shape[1] !== seq ||
    k.shape[3] !== headDim || heads % kvHeads !== 0
  ) {
    fail(`f32 keys of shape [${batch},${seq},kv_heads,${headDim}], kv_heads dividing ${heads}`, k);
  }
  if (v.dtype !== "f32" || !sameShape(v.shape, k.shape)) {
    fail(`f32 values of shape ${formatShape(k.shape)}`, v);
  }
  if (segmentIds.dtype !== "i32" || !sameShape(segmentIds.shape, [batch, seq])) {
    fail(`i32 segment ids of shape [${batch},${seq}]`, segmentIds);
  }
  return { batch, seq, heads, kvHeads, headDim };
}

/** Throws unless `t` is an f32 tensor of `shape`, the `role` operand of op `op` applied to q. */
function checkOperand(
  op: string,
  q: Tensor,
  role: string,
  t: Tensor,
  shape: readonly number[],
): void {
  if (t.dtype !== "f32" || !sameShape(t.shape, shape)) {
    throw new Error(
      `Cannot apply "${op}" to ${q}: expected an f32 ${role} of shape ${
        formatShape(shape)
      }, received ${t}`,
    );
  }
}

/** Elements of the attention output of `dims` (where the forward's lse rows start). */
function outputElements(dims: AttentionDims): number {
  return dims.batch * dims.seq * dims.heads * dims.headDim;
}

/**
 * The job of op `op`'s launch of `entry` on (q, k, v, segmentIds) and, for the backward, dO and
 * the stats, into `out`.
 */
function attentionJob(
  op: string,
  entry: AttentionEntry,
  [q, k, v, segmentIds, dO, stats]: readonly BoundTensor[],
  out: BoundTensor,
  { scale, window, softcap }: AttentionAttrs,
): AttentionJob {
  const dims = attentionDims(op, q.tensor, k.tensor, v.tensor, segmentIds.tensor);
  const bufs = {
    q: q.buffer,
    k: k.buffer,
    v: v.buffer,
    segmentIds: segmentIds.buffer,
    dO: dO?.buffer,
    stats: stats?.buffer,
    out: out.buffer,
    lseAt: outputElements(dims),
    dvAt: dvOffset(dims),
  };
  return { op, entry, dims, math: { scale, window, softcap }, bufs };
}

/**
 * The forward on (q, k, v, segmentIds): output [batch, seq, heads, head_dim] and lse [batch, seq,
 * heads], packed flat in that order.
 */
const ATTENTION_FORWARD: OpDef<AttentionAttrs> = {
  name: "causal_attention",
  output([q, k, v, segmentIds]) {
    const dims = attentionDims("causal_attention", q, k, v, segmentIds);
    return { shape: [attentionOutElements("forward", dims)], dtype: "f32" };
  },
  async launch(ctx, inputs, out, attrs) {
    const job = attentionJob("causal_attention", "forward", inputs, out, attrs);
    return attentionLaunches(ctx, job, await chooseAttentionKernel(ctx.gpu, job, attrs.kernel));
  },
  reference([q, k, v, segmentIds], [qt, kt, vt, st], { scale, window, softcap }) {
    const dims = attentionDims("causal_attention", qt, kt, vt, st);
    const { out, lse } = attentionForwardRef(q, k, v, segmentIds, dims, scale, window, softcap);
    const packed = new Float64Array(out.length + lse.length);
    packed.set(out);
    packed.set(lse, out.length);
    return packed;
  },
};

/** (lse, delta) [batch, seq, heads, 2] from the forward's packed output and dO. */
const ATTENTION_STATS: OpDef<Record<never, never>> = {
  name: "causal_attention_stats",
  output([fwd, dO]) {
    const rows = dO.rank === 4 ? dO.size / dO.lastDim : 0;
    if (
      dO.dtype !== "f32" || dO.rank !== 4 || fwd.dtype !== "f32" || fwd.rank !== 1 ||
      fwd.size !== dO.size + rows
    ) {
      throw new Error(
        `Cannot apply "causal_attention_stats" to ${fwd} and ${dO}: expected an attention ` +
          "forward's packed output and an f32 output gradient [batch, seq, heads, head_dim]",
      );
    }
    return { shape: [...dO.shape.slice(0, 3), 2], dtype: "f32" };
  },
  launch(_ctx, [fwd, dO], out) {
    const rows = dO.tensor.size / dO.tensor.lastDim;
    return [{
      spec: {
        shader: "attention_stats",
        entryPoint: "main",
        constants: { WG: 64 },
        bindings: ["read", "read", "read_write"],
        params: true,
      },
      buffers: [fwd.buffer, dO.buffer, out.buffer],
      params: packParams({ rows, head_dim: dO.tensor.lastDim, lse_at: dO.tensor.size }),
      workgroups: grid1d(Math.ceil(rows / 64)),
    }];
  },
  reference([fwd, dO], [, dOt]) {
    const width = dOt.lastDim;
    const rows = dOt.size / width;
    const stats = new Float64Array(2 * rows);
    for (let i = 0; i < rows; i++) {
      let delta = 0;
      for (let d = 0; d < width; d++) delta += fwd[i * width + d] * dO[i * width + d];
      stats[2 * i] = fwd[dOt.size + i];
      stats[2 * i + 1] = delta;
    }
    return stats;
  },
};

/**
 * A non-differentiable backward op on (q, k, v, segmentIds, dO, stats): `backward_q` gives dq,
 * `backward_kv` dk and dv packed (dv from element {@link dvOffset}).
 */
function gradientOp(
  name: string,
  entry: Exclude<AttentionEntry, "forward">,
): OpDef<AttentionAttrs> {
  return {
    name,
    output([q, k, v, segmentIds, dO, stats]) {
      const dims = attentionDims(name, q, k, v, segmentIds);
      checkOperand(name, q, "output gradient", dO, q.shape);
      checkOperand(name, q, "stats operand", stats, [dims.batch, dims.seq, dims.heads, 2]);
      return {
        shape: entry === "backward_q" ? q.shape : [attentionOutElements(entry, dims)],
        dtype: "f32",
      };
    },
    async launch(ctx, inputs, out, attrs) {
      const job = attentionJob(name, entry, inputs, out, attrs);
      return attentionLaunches(ctx, job, await chooseAttentionKernel(ctx.gpu, job, attrs.kernel));
    },
  };
}

const ATTENTION_GRAD_Q = gradientOp("causal_attention_grad_q", "backward_q");
const ATTENTION_GRAD_KV = gradientOp("causal_attention_grad_kv", "backward_kv");

/** The leading elements of input 0 viewed with the shape of input 1 (no kernel, no copy). */
const LEADING_VIEW: OpDef<Record<never, never>> = {
  name: "leading_view",
  aliasOf: 0,
  output([x, like]) {
    if (x.dtype !== like.dtype || x.size < like.size) {
      throw new Error(`Cannot view ${x} as ${like}: expected at least ${like.size} ${like.dtype}s`);
    }
    return { shape: like.shape, dtype: like.dtype };
  },
  launch: () => [],
};

/**
 * The attention output: a view of the forward's packed output (inputs fwd, q, k, v, segmentIds),
 * whose backward runs the gradient ops.
 */
const ATTENTION_OUTPUT: OpDef<AttentionAttrs> = {
  name: "causal_attention_output",
  aliasOf: 0,
  output([fwd, q]) {
    return { shape: q.shape, dtype: fwd.dtype };
  },
  launch: () => [],
  backward(grad, [fwd, q, k, v, segmentIds], _out, attrs) {
    const g = grad.graph;
    const stats = g.apply(ATTENTION_STATS, [fwd, grad], {});
    const operands = [q, k, v, segmentIds, grad, stats];
    const dkv = g.apply(ATTENTION_GRAD_KV, operands, attrs);
    const dims = attentionDims("causal_attention", q, k, v, segmentIds);
    const dvAt = dvOffset(dims);
    const dv = sliceLast(reshape(dkv, [1, dkv.size]), dvAt, k.size);
    return [
      null,
      g.apply(ATTENTION_GRAD_Q, operands, attrs),
      g.apply(LEADING_VIEW, [dkv, k], {}),
      reshape(dv, k.shape),
      null,
    ];
  },
};

/**
 * Causal self-attention: q [batch, seq, heads, head_dim], k and v [batch, seq, kv_heads,
 * head_dim] with kv_heads dividing heads (query head h uses kv head floor(h / (heads /
 * kv_heads)), HF's repeat_kv), `segmentIds` [batch, seq] (i32). Query t attends to key s iff
 * s <= t, both have the same segment id and (with `options.window`) t - s < window, so one row
 * can pack several sequences; a negative id marks padding, whose output row is 0 and which gets
 * and gives no gradient. Weights are `softmax(scale * q.k)` in f32 (with `options.softcap` c,
 * of c tanh(scale * q.k / c)). Returns [batch, seq, heads, head_dim]; differentiable in q, k, v.
 */
export function causalAttention(
  q: Tensor,
  k: Tensor,
  v: Tensor,
  segmentIds: Tensor,
  options: AttentionOptions = {},
): Tensor {
  const scale = options.scale ?? 1 / Math.sqrt(q.lastDim);
  const fail = (expected: string, received: unknown): never => {
    throw new Error(
      `Cannot apply "causal_attention" to ${q}: expected ${expected}, received ${received}`,
    );
  };
  if (!Number.isFinite(scale)) fail("a finite scale", scale);
  const window = options.window ?? 0;
  if (!Number.isSafeInteger(window) || window < 0) fail("a whole window >= 0 (0: none)", window);
  const softcap = options.softcap ?? 0;
  if (!(softcap >= 0 && Number.isFinite(softcap))) fail("a finite softcap >= 0 (0: none)", softcap);
  const attrs: AttentionAttrs = {
    scale,
    window,
    softcap,
    ...(options.kernel ? { kernel: options.kernel } : {}),
  };
  const fwd = q.graph.apply(ATTENTION_FORWARD, [q, k, v, segmentIds], attrs);
  return q.graph.apply(ATTENTION_OUTPUT, [fwd, q, k, v, segmentIds], attrs);
}
