/**
 * Matrix multiplication `op(a) @ op(b)` (op = optional transpose of the last two dimensions),
 * batched over leading dimensions, where one operand may be a 2-D matrix shared by every batch.
 * The kernel variant is autotuned per adapter and shape class (see `matmul_autotune.ts`), the
 * texture-operand one included where the layout allows it. Its backward is more matmuls with
 * flipped transpose flags (each autotuned again), never a transpose copy. f32, except that B (a
 * frozen weight) may be bf16 or f16, read by the kernels with f32 arithmetic.
 */

import { MAX_WORKGROUPS_PER_DIM } from "../gpu/dispatch.ts";
import type { BoundTensor, KernelLaunch, LaunchContext, OpDef } from "../graph/op.ts";
import { formatShape, isHalf, sameShape, shapeSize, type Tensor } from "../graph/tensor.ts";
import { sumTo } from "./broadcast.ts";
import { chooseMatmulVariant } from "./matmul_autotune.ts";
import {
  type ConstantOperands,
  matmulLaunch,
  type MatmulProblem,
  type MatmulVariant,
  matmulVariant,
} from "./matmul_variants.ts";
import { reshape } from "./reshape.ts";
import { matmulRef } from "../reference/matmul.ts";

/** Options of {@link matmul}. */
export interface MatmulOptions {
  /** `a` is stored as [..., K, M] and used transposed. */
  transA?: boolean;
  /** `b` is stored as [..., N, K] and used transposed. */
  transB?: boolean;
  /** Forces a kernel variant by name (tests, benches); otherwise autotuned. */
  variant?: string;
}

/** Attributes of a matmul node. */
export interface MatmulAttrs {
  transA: boolean;
  transB: boolean;
  variant?: string;
}

/** The most batches one launch takes (workgroups along z). */
const MAX_BATCH = 65535;

/**
 * Checks shapes and returns the problem and the output shape. `a` is [...batch, M, K] (or
 * [...batch, K, M] with transA), `b` is [...batch, K, N] (or [...batch, N, K] with transB);
 * either may drop the batch dimensions to be shared; the output is [...batch, M, N].
 */
export function matmulShapes(
  aShape: readonly number[],
  bShape: readonly number[],
  flags: { transA?: boolean; transB?: boolean } = {},
): MatmulProblem & { shape: number[] } {
  const what = `Cannot matmul ${formatShape(aShape)}${flags.transA ? "^T" : ""} by ${
    formatShape(bShape)
  }${flags.transB ? "^T" : ""}`;
  if (aShape.length < 2 || bShape.length < 2) {
    throw new Error(`${what}: expected operands with at least 2 dimensions`);
  }
  const [a0, a1] = aShape.slice(-2);
  const [b0, b1] = bShape.slice(-2);
  const [m, k] = flags.transA ? [a1, a0] : [a0, a1];
  const [kb, n] = flags.transB ? [b1, b0] : [b0, b1];
  if (k !== kb) {
    throw new Error(`${what}: inner dimensions differ (K=${k} from a, ${kb} from b)`);
  }
  const aBatch = aShape.slice(0, -2);
  const bBatch = bShape.slice(0, -2);
  if (aBatch.length && bBatch.length && formatShape(aBatch) !== formatShape(bBatch)) {
    throw new Error(
      `${what}: batch dimensions differ (${formatShape(aBatch)} vs ${formatShape(bBatch)}); ` +
        "expected equal ones, or a 2-D operand shared by every batch",
    );
  }
  const batchShape = aBatch.length ? aBatch : bBatch;
  const batch = shapeSize(batchShape);
  if (batch > MAX_BATCH) {
    throw new Error(`${what}: expected at most ${MAX_BATCH} batches, received ${batch}`);
  }
  return {
    batch,
    m,
    n,
    k,
    transA: Boolean(flags.transA),
    transB: Boolean(flags.transB),
    strideA: aBatch.length ? m * k : 0,
    strideB: bBatch.length ? k * n : 0,
    strideC: m * n,
    shape: [...batchShape, m, n],
  };
}

/** The fewest rows of C one workgroup of any variant covers (bounds a folded problem's grid). */
const MIN_ROWS_PER_WORKGROUP = 4;

/**
 * `p` with its batch folded into the rows of A and C when B is shared and A is not transposed:
 * batch products [M, K] @ B are then one [batch * M, K] @ B (the same memory, as A and C are
 * contiguous), so kernels blocked along M waste no rows per batch (decode: batch x 1 rows).
 * Returns `p` itself when it cannot be folded.
 */
export function foldSharedB(p: MatmulProblem): MatmulProblem {
  const rows = p.batch * p.m;
  if (p.batch === 1 || p.strideB !== 0 || p.transA) return p;
  if (Math.ceil(rows / MIN_ROWS_PER_WORKGROUP) > MAX_WORKGROUPS_PER_DIM) return p;
  return { ...p, batch: 1, m: rows, strideA: rows * p.k, strideC: rows * p.n };
}

/**
 * The problem of `op(a) @ op(b)` (its batch folded into rows where B is shared), the variant
 * `attrs` forces or else the autotuner's for it, and which operands are constant variables.
 */
export async function planMatmul(
  ctx: LaunchContext,
  [a, b]: readonly BoundTensor[],
  attrs: MatmulAttrs,
): Promise<{ problem: MatmulProblem; variant: MatmulVariant; constant: ConstantOperands }> {
  const shapes = matmulShapes(a.tensor.shape, b.tensor.shape, attrs);
  const bFormat = isHalf(b.tensor.dtype) ? b.tensor.dtype : undefined;
  const problem = foldSharedB(bFormat ? { ...shapes, bFormat } : shapes);
  const constant = { a: ctx.isConstantVariable(a.tensor), b: ctx.isConstantVariable(b.tensor) };
  // Texture variants copy the operands, so their buffers (a variable's may not) need COPY_SRC;
  // an f32 weight's copy outlives the product, so it must fit the weight textures' budget.
  const textures = Boolean(a.buffer.usage & b.buffer.usage & GPUBufferUsage.COPY_SRC) &&
    (!constant.b || bFormat !== undefined ||
      ctx.gpu.variableTextures.admits(b.buffer, b.buffer.size));
  const variant = attrs.variant === undefined
    ? await chooseMatmulVariant(ctx.gpu, problem, { textures, constantB: constant.b })
    : matmulVariant(attrs.variant);
  return { problem, variant, constant };
}

/** The launch of `op(a) @ op(b)` into `out` (added to what `out` holds when `accumulate`). */
async function launchMatmul(
  ctx: LaunchContext,
  [a, b]: readonly BoundTensor[],
  out: BoundTensor,
  attrs: MatmulAttrs,
  accumulate: boolean,
): Promise<KernelLaunch[]> {
  const { problem, variant, constant } = await planMatmul(ctx, [a, b], attrs);
  return matmulLaunch(
    ctx,
    variant,
    { ...problem, accumulate },
    a.buffer,
    b.buffer,
    out.buffer,
    constant,
  );
}

const MATMUL: OpDef<MatmulAttrs> = {
  name: "matmul",
  output([a, b], attrs) {
    if (a.dtype !== "f32" || (b.dtype !== "f32" && !isHalf(b.dtype))) {
      throw new Error(
        `Cannot matmul ${a} by ${b}: expected an f32 A and an f32, bf16 or f16 B (a weight)`,
      );
    }
    if (attrs.variant !== undefined) matmulVariant(attrs.variant);
    return { shape: matmulShapes(a.shape, b.shape, attrs).shape, dtype: "f32" };
  },
  launch: (ctx, operands, out, attrs) => launchMatmul(ctx, operands, out, attrs, false),
  reference: ([a, b], [at, bt], attrs) => matmulRef(a, b, matmulShapes(at.shape, bt.shape, attrs)),
  backward(g, [a, b], _out, { transA, transB, variant }) {
    // With A' = op(a) [M,K], B' = op(b) [K,N] and G [M,N]: dA' = G B'^T and dB' = A'^T G.
    const mm = (x: Tensor, y: Tensor, tx: boolean, ty: boolean) =>
      matmul(x, y, { transA: tx, transB: ty, variant });
    const da = transA ? mm(b, g, transB, true) : mm(g, b, false, !transB);
    let db: Tensor;
    if (b.rank === 2 && a.rank > 2 && !transA) {
      // b is shared: fold the batch into the rows of a and g, so dB is one 2-D matmul.
      const rows = a.size / a.lastDim;
      const a2 = reshape(a, [rows, a.lastDim]);
      const g2 = reshape(g, [rows, g.lastDim]);
      db = transB ? mm(g2, a2, true, false) : mm(a2, g2, true, false);
    } else {
      db = transB ? mm(g, a, true, transA) : mm(a, g, !transA, false);
    }
    // A shared operand gets the sum of its per-batch gradients.
    return [sumTo(da, a.shape), sumTo(db, b.shape)];
  },
};

/**
 * `op(a) @ op(b)`: a [...batch, M, K] (or [...batch, K, M] with `transA`) by b [...batch, K, N]
 * (or [...batch, N, K] with `transB`), either operand 2-D to share it across the batch; the
 * result is [...batch, M, N].
 *
 * @example
 * ```ts
 * import { Graph } from "../graph/graph.ts";
 * const g = new Graph();
 * const y = matmul(g.input([2, 5, 8]), g.input([8, 3])); // [B, T, C] @ [C, D] -> [B, T, D]
 * const logits = matmul(g.input([5, 8]), g.input([11, 8]), { transB: true }); // -> [T, V]
 * ```
 */
export function matmul(a: Tensor, b: Tensor, options: MatmulOptions = {}): Tensor {
  return a.graph.apply(MATMUL, [a, b], matmulAttrs(options));
}

/** The node attributes of `options`. */
export function matmulAttrs(options: MatmulOptions): MatmulAttrs {
  return {
    transA: Boolean(options.transA),
    transB: Boolean(options.transB),
    ...(options.variant === undefined ? {} : { variant: options.variant }),
  };
}

/**
 * `acc + op(a) @ op(b)` computed in place in `acc` (its storage is the result's) by one matmul
 * launch that adds its products to what C holds, instead of a matmul and a separate add: e.g. a
 * weight gradient summed over micro-batches. Not differentiable (accumulators are not).
 */
const MATMUL_ACCUMULATE: OpDef<MatmulAttrs> = {
  name: "matmul_accumulate",
  inPlace: 0,
  output([acc, a, b], attrs) {
    const product = MATMUL.output([a, b], attrs);
    if (acc.dtype !== "f32" || !sameShape(acc.shape, product.shape)) {
      throw new Error(
        `Cannot accumulate ${a} @ ${b} into ${acc}: expected an f32 accumulator of shape ${
          formatShape(product.shape)
        }`,
      );
    }
    return product;
  },
  launch: (ctx, [, a, b], out, attrs) => launchMatmul(ctx, [a, b], out, attrs, true),
  reference: ([acc, a, b], [, at, bt], attrs) => {
    const product = matmulRef(a, b, matmulShapes(at.shape, bt.shape, attrs));
    return Float32Array.from(product, (x, i) => (acc[i] as number) + x);
  },
};

/**
 * `acc += t` in one launch when a {@link matmul} made `t` (the product added by the matmul's own
 * stores, see {@link matmulAccumulate}); undefined when `t` is something else.
 */
export function accumulateMatmulProduct(acc: Tensor, t: Tensor): Tensor | undefined {
  if (t.source.kind !== "op" || t.source.op !== MATMUL) return undefined;
  const [a, b] = t.source.inputs;
  return acc.graph.apply(MATMUL_ACCUMULATE, [acc, a, b], t.source.attrs as MatmulAttrs);
}

/** `acc += op(a) @ op(b)` in one launch: the updated `acc` (see `MATMUL_ACCUMULATE`). */
export function matmulAccumulate(
  acc: Tensor,
  a: Tensor,
  b: Tensor,
  options: MatmulOptions = {},
): Tensor {
  return acc.graph.apply(MATMUL_ACCUMULATE, [acc, a, b], matmulAttrs(options));
}
