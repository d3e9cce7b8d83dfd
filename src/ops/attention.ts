/**
 * Causal self-attention over packed or padded batches, with grouped-query attention, on
 * `shaders/attention.wgsl`. The forward is an online softmax over key tiles (no [T, T] score
 * matrix) and keeps no log-sum-exp: an op has one output, and inference should not pay for it.
 * So the backward is four non-differentiable ops: `causal_attention_stats` recomputes the lse
 * (with delta = rowsum(dO * O)), then dq (iterating over keys) and dk and dv (iterating over
 * queries; two ops, each recomputing P, again as an op has one output), without atomics, so
 * results are deterministic. The head dim is a runtime parameter: one pipeline per kernel serves
 * every model. f32 only; an optional sliding window; no dropout, ALiBi, soft-capping or KV cache.
 * On CPU adapters the operands are copied into textures first (`shaders/attention_texture.wgsl`,
 * head dims that are multiples of 4), whose loads cost a fraction of storage loads there; both
 * shaders are `shaders/lib/attention_core.wgsl` with their own loads.
 * Shaders: shaders/attention.wgsl, shaders/attention_texture.wgsl
 * Reference: src/reference/attention.ts
 * Test: tests/ops/attention_test.ts
 */

import { MAX_WORKGROUPS_PER_DIM } from "../gpu/dispatch.ts";
import { packParams } from "../gpu/kernel_params.ts";
import type { BoundTensor, KernelLaunch, LaunchContext, OpDef } from "../graph/op.ts";
import { formatShape, sameShape, type Tensor } from "../graph/tensor.ts";
import { causalAttentionRef } from "../reference/attention.ts";
import {
  type LinearTexture,
  linearTexture,
  perRunFills,
  textureMisfit,
  textureWidth,
} from "./operand_texture.ts";

/** Options of {@link causalAttention}. */
export interface AttentionOptions {
  /** Factor of q.k before the softmax; default 1 / sqrt(head_dim). */
  scale?: number;
  /**
   * Sliding window (HF's `sliding_window`): query t attends only to keys s with t - s < window.
   * Default none.
   */
  window?: number;
}

interface AttentionAttrs {
  scale: number;
  /** 0: none. */
  window: number;
}

/** Sizes of an attention problem, read off q [batch, seq, heads, headDim] and k. */
interface AttentionDims {
  batch: number;
  seq: number;
  heads: number;
  kvHeads: number;
  headDim: number;
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

/** How a kernel spreads its home rows (queries; keys for dk, dv) over invocations. */
interface Layout {
  /** Invocations per workgroup. */
  wg: number;
  /** Home rows per invocation / 4 (1 or 2). */
  rowGroups: number;
  /** Streamed rows per step / 4 (1 to 4). */
  colGroups: number;
}

/**
 * CPU adapters: one SIMD group (8 invocations); with storage operands, whose every load costs
 * one load per SIMD lane, 8 home rows each, so each streamed element feeds 8 rows; with texture
 * operands 4 (fewer registers; 15% faster backward on llvmpipe). GPUs: 64 invocations of 4
 * rows, a smaller register block (a first choice, not yet timed on GPU hardware).
 */
function layoutFor(ctx: LaunchContext, textures: boolean): Layout {
  if (!ctx.gpu.summary.isFallback) return { wg: 64, rowGroups: 1, colGroups: 4 };
  return { wg: 8, rowGroups: textures ? 1 : 2, colGroups: 4 };
}

/**
 * Accumulator elements (head-dim elements x row groups) an invocation may keep in a private array
 * (`ACC_MEM` in `shaders/lib/attention_core.wgsl`), which CPU adapters do: on llvmpipe that costs
 * far less than updating the out rows in storage once per tile (1.5x faster at head dim 64).
 */
const PRIVATE_ACC_ELEMENTS = 256;

/** Entry points of `shaders/attention.wgsl`. */
type Entry = "forward" | "backward_stats" | "backward_q" | "backward_kv";

/** The optional operands of a launch; q's buffer is bound where one is absent. */
interface ExtraBuffers {
  o?: GPUBuffer;
  dO?: GPUBuffer;
  stats?: GPUBuffer;
}

/** Storage textures `shaders/attention_texture.wgsl` binds: q, k, v, o and d_o. */
const ATTENTION_TEXTURES = 5;

/**
 * Whether a launch reads q, k, v, o and d_o through textures (`shaders/attention_texture.wgsl`):
 * on CPU adapters that bind {@link ATTENTION_TEXTURES} storage textures, when the head dim is a
 * multiple of 4, the buffers can be copied and each fits one texture.
 */
function readsTextures(ctx: LaunchContext, dims: AttentionDims, buffers: GPUBuffer[]): boolean {
  if (!ctx.gpu.summary.isFallback || dims.headDim % 4 !== 0) return false;
  if (ctx.gpu.device.limits.maxStorageTexturesPerShaderStage < ATTENTION_TEXTURES) return false;
  if (!buffers.every((b) => b.usage & GPUBufferUsage.COPY_SRC)) return false;
  const { batch, seq, heads, headDim } = dims;
  return textureMisfit(ctx.gpu, batch * seq * heads * headDim, "q") === undefined;
}

/**
 * The launch of entry `entry` of `shaders/attention.wgsl` (or `attention_texture.wgsl`, see
 * {@link readsTextures}) for op `op` on (q, k, v, segmentIds), writing `out`: one workgroup per
 * block of home rows, head (kv head for backward_kv) and batch row; for the texture kernel, the
 * fills of its small operand textures before it. `gradV` selects dv over dk for backward_kv.
 * Each texture launch copies its operands again: the forward and the four backward launches each
 * fill their own textures (a memcpy or a copy kernel each, small beside the attention kernels).
 */
function attentionLaunch(
  ctx: LaunchContext,
  op: string,
  entry: Entry,
  [q, k, v, segmentIds]: readonly BoundTensor[],
  extra: ExtraBuffers,
  out: GPUBuffer,
  { scale, window }: AttentionAttrs,
  gradV = false,
): KernelLaunch[] {
  const dims = attentionDims(op, q.tensor, k.tensor, v.tensor, segmentIds.tensor);
  // q, k, v, o, d_o: the tensors the kernel reads through `quads` (o and d_o have q's size).
  const operands = [q.buffer, k.buffer, v.buffer, extra.o ?? q.buffer, extra.dO ?? q.buffer];
  const sizes = [q.tensor.size, k.tensor.size, k.tensor.size, q.tensor.size, q.tensor.size];
  const textures = readsTextures(ctx, dims, operands);
  const { wg, rowGroups, colGroups } = layoutFor(ctx, textures);
  const grid = [
    Math.ceil(dims.seq / (wg * 4 * rowGroups)),
    entry === "backward_kv" ? dims.kvHeads : dims.heads,
    dims.batch,
  ] as const;
  if (grid.some((n) => n > MAX_WORKGROUPS_PER_DIM)) {
    throw new Error(
      `Cannot launch "${op}" on ${q.tensor}: grid [${grid}] exceeds ` +
        `${MAX_WORKGROUPS_PER_DIM} workgroups per dimension`,
    );
  }
  const constants: Record<string, number> = {
    WG: wg,
    ROW_GROUPS: rowGroups,
    COL_GROUPS: colGroups,
  };
  if (entry === "backward_kv") constants.GRAD_V = Number(gradV);
  if (ctx.gpu.summary.isFallback && rowGroups * dims.headDim <= PRIVATE_ACC_ELEMENTS) {
    constants.PRIVATE_ACC = 1;
  }
  const params = packParams({
    seq: dims.seq,
    heads: dims.heads,
    kv_heads: dims.kvHeads,
    head_dim: dims.headDim,
    scale: { f32: scale },
    window,
  });
  if (!textures) {
    const [qb, kb, vb, ob, dob] = operands;
    return [{
      spec: {
        shader: "attention",
        entryPoint: entry,
        constants,
        bindings: ["read", "read", "read", "read", "read", "read", "read", "read_write"],
        params: true,
      },
      buffers: [qb, kb, vb, segmentIds.buffer, ob, dob, extra.stats ?? q.buffer, out],
      params,
      workgroups: grid,
    }];
  }
  // One texture per distinct buffer (q stands in for absent operands), filled before the launch.
  const copies = new Map<GPUBuffer, LinearTexture>();
  operands.forEach((buffer, i) => {
    if (!copies.has(buffer)) {
      copies.set(buffer, linearTexture(ctx, buffer, sizes[i], `${op}:operand`, false));
    }
  });
  const [tq, tk, tv, to, tdo] = operands.map((b) => copies.get(b)!.view);
  const fills = perRunFills([...copies.values()]);
  return [...fills.launches, {
    spec: {
      shader: "attention_texture",
      entryPoint: entry,
      constants: { ...constants, TEX_W: textureWidth(ctx.gpu) },
      bindings: [
        "texture",
        "texture",
        "texture",
        "read",
        "texture",
        "texture",
        "read",
        "read_write",
      ],
      params: true,
    },
    buffers: [tq, tk, tv, segmentIds.buffer, to, tdo, extra.stats ?? q.buffer, out],
    params,
    workgroups: grid,
    ...(fills.before ? { before: fills.before } : {}),
  }];
}

/**
 * A non-differentiable backward op on (q, k, v, segmentIds, dO, x): `backward_stats` (x = the
 * forward output o) gives (lse, delta) as [batch, seq, heads, 2]; `backward_q` (x = those stats)
 * gives dq; `backward_kv` gives dk, or dv when `gradV`.
 */
function backwardOp(
  name: string,
  entry: Exclude<Entry, "forward">,
  gradV = false,
): OpDef<AttentionAttrs> {
  return {
    name,
    output([q, k, v, segmentIds, dO, x]) {
      const { batch, seq, heads } = attentionDims(name, q, k, v, segmentIds);
      const statsShape = [batch, seq, heads, 2];
      checkOperand(name, q, "output gradient", dO, q.shape);
      if (entry === "backward_stats") {
        checkOperand(name, q, "output", x, q.shape);
        return { shape: statsShape, dtype: "f32" };
      }
      checkOperand(name, q, "stats operand", x, statsShape);
      return { shape: entry === "backward_q" ? q.shape : k.shape, dtype: "f32" };
    },
    launch(ctx, [q, k, v, segmentIds, dO, x], out, attrs) {
      const extra = entry === "backward_stats"
        ? { o: x.buffer, dO: dO.buffer }
        : { dO: dO.buffer, stats: x.buffer };
      return attentionLaunch(
        ctx,
        name,
        entry,
        [q, k, v, segmentIds],
        extra,
        out.buffer,
        attrs,
        gradV,
      );
    },
  };
}

const ATTENTION_STATS = backwardOp("causal_attention_stats", "backward_stats");
const ATTENTION_GRAD_Q = backwardOp("causal_attention_grad_q", "backward_q");
const ATTENTION_GRAD_K = backwardOp("causal_attention_grad_k", "backward_kv");
const ATTENTION_GRAD_V = backwardOp("causal_attention_grad_v", "backward_kv", true);

const CAUSAL_ATTENTION: OpDef<AttentionAttrs> = {
  name: "causal_attention",
  output([q, k, v, segmentIds]) {
    attentionDims("causal_attention", q, k, v, segmentIds);
    return { shape: q.shape, dtype: "f32" };
  },
  launch(ctx, inputs, out, attrs) {
    return attentionLaunch(ctx, "causal_attention", "forward", inputs, {}, out.buffer, attrs);
  },
  reference: ([q, k, v, segmentIds], [qt, kt, vt, st], { scale, window }) =>
    causalAttentionRef(
      q,
      k,
      v,
      segmentIds,
      attentionDims("causal_attention", qt, kt, vt, st),
      scale,
      window,
    ),
  backward(grad, [q, k, v, segmentIds], out, attrs) {
    const g = grad.graph;
    const stats = g.apply(ATTENTION_STATS, [q, k, v, segmentIds, grad, out], attrs);
    const operands = [q, k, v, segmentIds, grad, stats];
    return [
      g.apply(ATTENTION_GRAD_Q, operands, attrs),
      g.apply(ATTENTION_GRAD_K, operands, attrs),
      g.apply(ATTENTION_GRAD_V, operands, attrs),
      null,
    ];
  },
};

/**
 * Causal self-attention: q [batch, seq, heads, head_dim], k and v [batch, seq, kv_heads,
 * head_dim] with kv_heads dividing heads (query head h uses kv head floor(h / (heads /
 * kv_heads)), HF's repeat_kv), `segmentIds` [batch, seq] (i32). Query t attends to key s iff
 * s <= t and both have the same segment id (and, with `options.window`, t - s < window), so one
 * row can pack several sequences; a negative id marks padding, whose output row is 0 and which
 * gets and gives no gradient. Weights are `softmax(scale * q.k)` in f32. Returns [batch, seq,
 * heads, head_dim]; differentiable in q, k, v.
 */
export function causalAttention(
  q: Tensor,
  k: Tensor,
  v: Tensor,
  segmentIds: Tensor,
  options: AttentionOptions = {},
): Tensor {
  const scale = options.scale ?? 1 / Math.sqrt(q.lastDim);
  const window = options.window ?? 0;
  if (!Number.isFinite(scale) || !Number.isSafeInteger(window) || window < 0) {
    throw new Error(
      `Cannot apply "causal_attention" to ${q}: expected a finite scale and a whole window >= 1, received ${scale} and ${options.window}`,
    );
  }
  return q.graph.apply(CAUSAL_ATTENTION, [q, k, v, segmentIds], { scale, window });
}
