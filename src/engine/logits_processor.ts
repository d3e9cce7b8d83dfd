/**
 * The sampler's logits processors as graph ops: `processLogits` adds a per-row bias (OpenAI's
 * `logit_bias`, and constrained decoding's -inf masks) and subtracts OpenAI's frequency and
 * presence penalties from logits [N, V] before sampling; `countTokens` adds each row's sampled
 * token to the counts [N, V] the penalties read, in place. The engine builds them only into
 * graphs of batches that ask for them. Not differentiable.
 * Shader: shaders/logits_processor.wgsl
 * Reference: src/reference/logits_processor.ts
 * Test: tests/engine/logits_processor_test.ts
 */

import { grid1d } from "../gpu/dispatch.ts";
import { packParams } from "../gpu/kernel_params.ts";
import type { KernelSpec } from "../gpu/kernel_spec.ts";
import type { OpDef } from "../graph/op.ts";
import { sameShape, type Tensor } from "../graph/tensor.ts";
import { countTokensRef, processLogitsRef } from "../reference/logits_processor.ts";

/** Threads per workgroup. */
const WG = 64;

/** Columns of the penalties tensor: (frequency, presence) per row. */
export const PENALTIES_WIDTH = 2;

const spec = (entryPoint: string): KernelSpec => ({
  shader: "logits_processor",
  entryPoint,
  constants: { WG },
  bindings: ["read", "read", "read", "read", "read_write"],
  params: true,
});

function check(op: string, logits: Tensor, role: string, t: Tensor, shape: number[]): void {
  if (logits.dtype !== "f32" || logits.rank !== 2) {
    throw new Error(`Cannot apply "${op}" to ${logits}: expected f32 [N,V]`);
  }
  const dtype = role === "tokens" ? ["u32", "i32"] : ["f32"];
  if (!dtype.includes(t.dtype) || !sameShape(t.shape, shape)) {
    throw new Error(
      `Cannot apply "${op}" to ${logits}: expected ${role} of dtype ${
        dtype.join(" or ")
      } and shape [${shape}], received ${t}`,
    );
  }
}

const PROCESS_LOGITS: OpDef<null> = {
  name: "process_logits",
  output([logits, bias, counts, penalties]) {
    check("process_logits", logits, "bias", bias, [...logits.shape]);
    check("process_logits", logits, "counts", counts, [...logits.shape]);
    check("process_logits", logits, "penalties", penalties, [logits.shape[0], PENALTIES_WIDTH]);
    return { shape: logits.shape, dtype: "f32" };
  },
  launch(_ctx, [logits, bias, counts, penalties], out) {
    const [rows, cols] = logits.tensor.shape;
    return [{
      spec: spec("adjust"),
      buffers: [logits.buffer, bias.buffer, counts.buffer, penalties.buffer, out.buffer],
      params: packParams({ rows, cols }),
      workgroups: grid1d(Math.ceil((rows * cols) / WG)),
    }];
  },
  reference: ([z, bias, counts, penalties], [zt]) =>
    processLogitsRef(z, bias, counts, penalties, zt.shape[1]),
};

const COUNT_TOKENS: OpDef<null> = {
  name: "count_tokens",
  inPlace: 0,
  output([counts, tokens]) {
    check("count_tokens", counts, "tokens", tokens, [counts.shape[0]]);
    return { shape: counts.shape, dtype: "f32" };
  },
  launch(_ctx, [counts, tokens], out) {
    const [rows, cols] = counts.tensor.shape;
    const t = tokens.buffer;
    return [{
      spec: spec("count"),
      buffers: [t, t, t, t, out.buffer],
      params: packParams({ rows, cols }),
      workgroups: grid1d(Math.ceil(rows / WG)),
    }];
  },
  reference: ([counts, tokens], [ct]) => countTokensRef(counts, tokens, ct.shape[1]),
};

/**
 * `logits + bias - frequency * counts - presence * (counts > 0)` for logits, bias and counts
 * [N, V] f32 and penalties [N, 2] f32 = (frequency, presence) per row (OpenAI's
 * `frequency_penalty` / `presence_penalty` over the sample's tokens so far). A -inf bias
 * excludes a token. Not differentiable.
 */
export function processLogits(
  logits: Tensor,
  bias: Tensor,
  counts: Tensor,
  penalties: Tensor,
): Tensor {
  return logits.graph.apply(PROCESS_LOGITS, [logits, bias, counts, penalties], null);
}

/**
 * `counts` [N, V] f32 with `counts[r, tokens[r]] += 1` for each row (a token >= V is skipped),
 * written in place: the result shares the counts' storage (a variable's buffer when `counts`
 * is bound to one). Not differentiable.
 */
export function countTokens(counts: Tensor, tokens: Tensor): Tensor {
  return counts.graph.apply(COUNT_TOKENS, [counts, tokens], null);
}
