/**
 * Per-row token log-probabilities (`log_softmax(logits)[target]`) and softmax entropies over the
 * last (vocabulary) axis, each computed row by row without materialising the log-softmax, with
 * their backward as separate non-differentiable ops sharing the shader. f32 logits only; the
 * temperature is the caller's (scale the logits first). Targets are not checked on the host: one
 * >= V (or a negative i32) gives log-prob 0 and no gradient, like an ignore index.
 * Shader: shaders/token_logprobs.wgsl
 * Reference: src/reference/token_logprobs.ts
 * Test: tests/ops/token_logprobs_test.ts
 */

import type { GpuContext } from "../gpu/device.ts";
import type { KernelLaunch, OpDef } from "../graph/op.ts";
import { formatShape, sameShape, type Tensor } from "../graph/tensor.ts";
import { checkLastAxisInput, rowLaunch } from "./row_launch.ts";
import { tokenEntropyRef, tokenLogprobsRef } from "../reference/token_logprobs.ts";

/**
 * One launch of `shaders/token_logprobs.wgsl`: one workgroup per row of `z` read as [rows, cols],
 * bindings (z, targets, g, out), params (rows, cols).
 */
function logitsRowLaunch(
  gpu: GpuContext,
  entryPoint: "forward" | "backward",
  entropy: boolean,
  z: Tensor,
  buffers: readonly [GPUBuffer, GPUBuffer, GPUBuffer, GPUBuffer],
): KernelLaunch {
  return rowLaunch(gpu, "token_logprobs", entryPoint, { ENTROPY: Number(entropy) }, z, buffers);
}

/** Throws unless `targets` holds integers with the shape of `logits` without its last axis. */
function checkTargets(op: string, logits: Tensor, targets: Tensor): void {
  const shape = logits.shape.slice(0, -1);
  if ((targets.dtype !== "i32" && targets.dtype !== "u32") || !sameShape(targets.shape, shape)) {
    throw new Error(
      `Cannot apply "${op}" to ${logits}: expected i32 or u32 targets of shape ${
        formatShape(shape)
      }, received ${targets}`,
    );
  }
}

/** Throws unless `g` is an f32 gradient with one value per row of `logits`. */
function checkRowGradient(op: string, logits: Tensor, g: Tensor): void {
  const shape = logits.shape.slice(0, -1);
  if (g.dtype !== "f32" || !sameShape(g.shape, shape)) {
    throw new Error(
      `Cannot apply "${op}" to ${logits}: expected an f32 gradient of shape ${
        formatShape(shape)
      }, received ${g}`,
    );
  }
}

/** Gradient of the token log-probs w.r.t. the logits: g * (onehot(target) - softmax(z)). */
const TOKEN_LOGPROBS_BACKWARD: OpDef<null> = {
  name: "token_logprobs_backward",
  output([z, targets, g]) {
    checkLastAxisInput("token_logprobs_backward", z);
    checkTargets("token_logprobs_backward", z, targets);
    checkRowGradient("token_logprobs_backward", z, g);
    return { shape: z.shape, dtype: "f32" };
  },
  launch(ctx, [z, targets, g], out) {
    return [
      logitsRowLaunch(ctx.gpu, "backward", false, z.tensor, [
        z.buffer,
        targets.buffer,
        g.buffer,
        out.buffer,
      ]),
    ];
  },
};

const TOKEN_LOGPROBS: OpDef<null> = {
  name: "token_logprobs",
  output([z, targets]) {
    checkLastAxisInput("token_logprobs", z);
    checkTargets("token_logprobs", z, targets);
    return { shape: z.shape.slice(0, -1), dtype: "f32" };
  },
  launch(ctx, [z, targets], out) {
    return [
      logitsRowLaunch(ctx.gpu, "forward", false, z.tensor, [
        z.buffer,
        targets.buffer,
        z.buffer,
        out.buffer,
      ]),
    ];
  },
  reference: ([z, targets], [zt]) => tokenLogprobsRef(z, zt.lastDim, targets),
  backward(grad, [z, targets]) {
    return [grad.graph.apply(TOKEN_LOGPROBS_BACKWARD, [z, targets, grad], null), null];
  },
};

/** Gradient of the entropy w.r.t. the logits: -g * p * (z - sum(p * z)). */
const TOKEN_ENTROPY_BACKWARD: OpDef<null> = {
  name: "token_entropy_backward",
  output([z, g]) {
    checkLastAxisInput("token_entropy_backward", z);
    checkRowGradient("token_entropy_backward", z, g);
    return { shape: z.shape, dtype: "f32" };
  },
  launch(ctx, [z, g], out) {
    return [
      logitsRowLaunch(ctx.gpu, "backward", true, z.tensor, [
        z.buffer,
        z.buffer,
        g.buffer,
        out.buffer,
      ]),
    ];
  },
};

const TOKEN_ENTROPY: OpDef<null> = {
  name: "token_entropy",
  output([z]) {
    checkLastAxisInput("token_entropy", z);
    return { shape: z.shape.slice(0, -1), dtype: "f32" };
  },
  launch(ctx, [z], out) {
    return [
      logitsRowLaunch(ctx.gpu, "forward", true, z.tensor, [
        z.buffer,
        z.buffer,
        z.buffer,
        out.buffer,
      ]),
    ];
  },
  reference: ([z], [zt]) => tokenEntropyRef(z, zt.lastDim),
  backward(grad, [z]) {
    return [grad.graph.apply(TOKEN_ENTROPY_BACKWARD, [z, grad], null)];
  },
};

/**
 * Log-probability of each target token: `log_softmax(logits)[..., target]` for `logits` [..., V]
 * (f32) and `targets` [...] (i32 or u32), giving [...]. A target outside [0, V) gives 0 and no
 * gradient. Differentiable with respect to `logits`.
 */
export function tokenLogprobs(logits: Tensor, targets: Tensor): Tensor {
  return logits.graph.apply(TOKEN_LOGPROBS, [logits, targets], null);
}

/**
 * Entropy of `softmax(logits)` per row: `logsumexp(z) - sum(softmax(z) * z)` for `logits`
 * [..., V] (f32), giving [...]. Differentiable.
 */
export function tokenEntropy(logits: Tensor): Tensor {
  return logits.graph.apply(TOKEN_ENTROPY, [logits], null);
}
