/**
 * Global gradient-norm clipping on the GPU: one graph op over every gradient tensor that yields
 * [norm, scale] with scale = min(1, maxNorm / (norm + 1e-6)) (`shaders/grad_norm.wgsl`). The
 * gradients are not rewritten: the AdamW kernel multiplies them by the scale as it reads them,
 * so nothing is read back. Not differentiable; L2 norm only (no inf-norm, no per-tensor clip).
 * Shader: shaders/grad_norm.wgsl
 * Reference: src/reference/adamw.ts
 * Test: tests/trainer/adamw_test.ts
 */

import { grid1d } from "../gpu/dispatch.ts";
import { packParams } from "../gpu/kernel_params.ts";
import type { KernelLaunch, OpDef } from "../graph/op.ts";
import type { Tensor } from "../graph/tensor.ts";

const WG = 256;
const ITEMS = 16;
/** Elements one `sumsq` workgroup reduces. */
const CHUNK = WG * ITEMS;

/** Index of the global gradient norm in the tensor {@link clipGradNorm} returns. */
export const NORM_INDEX = 0;
/** Index of the gradient scale in the tensor {@link clipGradNorm} returns. */
export const SCALE_INDEX = 1;

/** Attributes of the grad_norm op: the clip threshold, or null for no clipping (scale 1). */
interface GradNormAttrs {
  maxNorm: number | null;
}

const GRAD_NORM: OpDef<GradNormAttrs> = {
  name: "grad_norm",
  output(grads) {
    for (const g of grads) {
      if (g.dtype !== "f32") {
        throw new Error(`Cannot apply "grad_norm" to ${g}: expected an f32 gradient`);
      }
    }
    return { shape: [2], dtype: "f32" };
  },
  launch(ctx, grads, out, { maxNorm }) {
    const blocks = grads.map((g) => Math.ceil(g.tensor.size / CHUNK));
    const total = blocks.reduce((a, b) => a + b, 0);
    const partials = ctx.scratch(total * 4, "grad_norm_partials");
    const launches: KernelLaunch[] = [];
    let offset = 0;
    grads.forEach((g, i) => {
      launches.push({
        spec: {
          shader: "grad_norm",
          entryPoint: "sumsq",
          constants: { WG, ITEMS },
          bindings: ["read", "read_write"],
          params: true,
        },
        buffers: [g.buffer, partials],
        params: packParams({ n: g.tensor.size, offset, max_norm: { f32: 0 } }),
        workgroups: grid1d(blocks[i]),
      });
      offset += blocks[i];
    });
    launches.push({
      spec: {
        shader: "grad_norm",
        entryPoint: "finish",
        constants: { WG, CLIP: maxNorm === null ? 0 : 1 },
        bindings: ["read", "read_write"],
        params: true,
      },
      buffers: [partials, out.buffer],
      params: packParams({ n: total, offset: 0, max_norm: { f32: maxNorm ?? 0 } }),
      workgroups: [1, 1, 1],
    });
    return launches;
  },
};

/**
 * The global L2 norm of `grads` (all tensors together, as one vector) and the clip scale, as an
 * f32 tensor [2]: [{@link NORM_INDEX}] = norm, [{@link SCALE_INDEX}] = min(1, maxNorm / (norm +
 * 1e-6)), or 1 when `maxNorm` is undefined (no clipping; the norm is still computed, for
 * metrics). Pass the result to `AdamW.update`, which scales the gradients on the GPU, and read
 * it with the step's other metrics. Because it depends on every gradient, updates that read it
 * run only after the whole backward pass.
 */
export function clipGradNorm(grads: readonly Tensor[], maxNorm?: number): Tensor {
  if (maxNorm !== undefined && !(maxNorm > 0 && Number.isFinite(maxNorm))) {
    throw new Error(
      `Cannot clip gradients: expected a positive finite maxNorm, received ${maxNorm}`,
    );
  }
  if (grads.length === 0) {
    throw new Error(`Cannot apply "grad_norm": expected at least one gradient, received none`);
  }
  return grads[0].graph.apply(GRAD_NORM, grads, { maxNorm: maxNorm ?? null });
}
