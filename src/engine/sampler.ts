/**
 * The GPU token sampler of the generation engine: from logits [N, V] pick one token per row
 * (greedy, or temperature sampling with optional top-k and top-p) and its log-prob, with per-row
 * settings and seeded counter-based randomness read from tensors, so one compiled graph serves any
 * mix of requests and needs no readback. Not differentiable (these ops have no backward).
 * Shader: shaders/sampler.wgsl
 * Reference: src/reference/sampler.ts
 * Test: tests/engine/sampler_test.ts
 */

import { grid1d } from "../gpu/dispatch.ts";
import { packParams } from "../gpu/kernel_params.ts";
import type { OpDef } from "../graph/op.ts";
import type { DType, Tensor } from "../graph/tensor.ts";
import { rowLaunch } from "../ops/row_launch.ts";

/**
 * Sampling settings of one row. `temperature <= 0` is greedy (the first index of the max logit).
 * `topK` keeps the tokens whose logit is at least the k-th largest (ties at it all kept); 0 or
 * >= V is off; a fraction is rounded toward zero. `topP` then keeps the fewest most likely tokens
 * (of the distribution renormalised over the top-k set) whose probability reaches `topP`, again
 * with every token tied at the threshold logit; 1 (or more) is off, <= 0 keeps only the most
 * likely token(s). Top-k and top-p apply to sampling only, never to greedy rows.
 */
export interface SamplingParams {
  temperature: number;
  topK?: number;
  topP?: number;
}

/** Columns of the settings tensor: (temperature, top_k, top_p) per row. */
export const SETTINGS_WIDTH = 3;

/** Columns of the rng tensor: (seed, step) per row. */
export const RNG_WIDTH = 2;

/** The settings tensor's data [params.length, 3] f32 for the given rows. */
export function packSamplingSettings(
  params: readonly SamplingParams[],
): Float32Array<ArrayBuffer> {
  return Float32Array.from(
    params.flatMap(({ temperature, topK = 0, topP = 1 }) => [temperature, topK, topP]),
  );
}

/** The rng tensor's data [seeds.length, 2] u32: each row's seed and the shared `step`. */
export function packRngState(seeds: readonly number[], step = 0): Uint32Array<ArrayBuffer> {
  return Uint32Array.from(seeds.flatMap((seed) => [seed, step]));
}

/**
 * Throws unless `t` has one of `dtypes` and the shape `shape` (a null dimension: any size),
 * naming op `op` and the input's `role`.
 */
function checkInput(
  op: string,
  role: string,
  t: Tensor,
  dtypes: readonly DType[],
  shape: readonly (number | null)[],
): void {
  const fits = t.rank === shape.length && shape.every((d, i) => d === null || d === t.shape[i]);
  if (!dtypes.includes(t.dtype) || !fits) {
    throw new Error(
      `Cannot apply "${op}": expected ${role} of dtype ${dtypes.join(" or ")} and shape [${
        shape.map((d) => d ?? "N").join(",")
      }], received ${t}`,
    );
  }
}

/** Checks logits [N, V] f32 and settings [N, 3] f32; returns N. */
function checkLogits(op: string, logits: Tensor, settings: Tensor): number {
  if (logits.dtype !== "f32" || logits.rank !== 2) {
    throw new Error(`Cannot apply "${op}" to ${logits}: expected f32 logits of shape [N,V]`);
  }
  const rows = logits.shape[0];
  checkInput(op, "settings", settings, ["f32"], [rows, SETTINGS_WIDTH]);
  return rows;
}

/** The sampler's `QUADS` constant: rows of whole vec4s load four logits at a time. */
function quads(logits: Tensor): { QUADS: number } {
  return { QUADS: Number(logits.lastDim % 4 === 0) };
}

const SAMPLE_TOKENS: OpDef<null> = {
  name: "sample_tokens",
  output([logits, settings, rng]) {
    const rows = checkLogits("sample_tokens", logits, settings);
    checkInput("sample_tokens", "rng state", rng, ["u32"], [rows, RNG_WIDTH]);
    return { shape: [rows], dtype: "u32" };
  },
  launch(ctx, [logits, settings, rng], out) {
    const buffers = [logits.buffer, settings.buffer, rng.buffer, out.buffer];
    return [rowLaunch(ctx.gpu, "sampler", "sample", quads(logits.tensor), logits.tensor, buffers)];
  },
};

const TEMPERED_LOGPROBS: OpDef<null> = {
  name: "tempered_logprobs",
  output([logits, settings, tokens]) {
    const rows = checkLogits("tempered_logprobs", logits, settings);
    checkInput("tempered_logprobs", "tokens", tokens, ["u32", "i32"], [rows]);
    return { shape: [rows], dtype: "f32" };
  },
  launch(ctx, [logits, settings, tokens], out) {
    const buffers = [logits.buffer, settings.buffer, tokens.buffer, out.buffer];
    return [rowLaunch(ctx.gpu, "sampler", "logprob", quads(logits.tensor), logits.tensor, buffers)];
  },
};

/** Threads per workgroup of the one-thread-per-row `advance` kernel. */
const ADVANCE_WG = 64;

const ADVANCE_RNG: OpDef<null> = {
  name: "advance_rng",
  output([rng]) {
    checkInput("advance_rng", "rng state", rng, ["u32"], [null, RNG_WIDTH]);
    return { shape: rng.shape, dtype: "u32" };
  },
  launch(_ctx, [rng], out) {
    const rows = rng.tensor.shape[0];
    return [{
      spec: {
        shader: "sampler",
        entryPoint: "advance",
        constants: { WG: ADVANCE_WG },
        bindings: ["read", "read", "read", "read_write"],
        params: true,
      },
      buffers: [rng.buffer, rng.buffer, rng.buffer, out.buffer],
      params: packParams({ rows, cols: RNG_WIDTH }),
      workgroups: grid1d(Math.ceil(rows / ADVANCE_WG)),
    }];
  },
};

/** Tokens picked by {@link sampleTokens} and their log-probs. */
export interface SampledTokens {
  /** [N] u32 token ids. */
  tokens: Tensor;
  /** [N] f32: `log_softmax(logits / T)[token]` over the full vocabulary (T = 1 when greedy). */
  logprobs: Tensor;
}

/**
 * Samples one token per row of `logits` [N, V] (f32, finite; -inf allowed beside a finite logit)
 * with per-row `settings` [N, 3] f32 = (temperature, top_k, top_p) as in {@link SamplingParams}
 * (see {@link packSamplingSettings}) and `rng` [N, 2] u32 = (seed, step). The uniform number u of
 * a row is a hash of (seed, step) (`samplerUniform` in `src/reference/sampler.ts` reproduces it on
 * the CPU); the token is the first, in index order, of the tokens kept by top-k/top-p whose
 * running probability exceeds u. The row index is not hashed: a request's tokens do not depend on
 * its batch slot, so rows that must differ need different seeds. The reported log-prob is over the
 * full vocabulary, not renormalised after top-k/top-p: it equals a teacher-forced log-prob at the
 * same temperature ({@link temperedLogprobs}, the op computing it). Advance `step` between decode
 * steps with {@link advanceRng}.
 */
export function sampleTokens(logits: Tensor, settings: Tensor, rng: Tensor): SampledTokens {
  const tokens = logits.graph.apply(SAMPLE_TOKENS, [logits, settings, rng], null);
  return { tokens, logprobs: temperedLogprobs(logits, settings, tokens) };
}

/**
 * `log_softmax(logits / T)[token]` per row for `logits` [N, V] (f32), `settings` [N, 3] f32 whose
 * first column is T (T <= 0 reads as 1) and `tokens` [N] (u32 or i32); a token outside [0, V)
 * gives 0. Not differentiable: the trainer's gradient path is `tokenLogprobs` on scaled logits.
 */
export function temperedLogprobs(logits: Tensor, settings: Tensor, tokens: Tensor): Tensor {
  return logits.graph.apply(TEMPERED_LOGPROBS, [logits, settings, tokens], null);
}

/**
 * The rng state of the next decode step: `rng` [N, 2] u32 with each row's step + 1 (seeds kept).
 * The engine adds it as an output of its decode graph and feeds that output's buffer back as the
 * `rng` input of the next run (`run(new Map([[rng, exe.buffer(next)]]))`, a GPU-side copy at the
 * start of the command buffer), so steps advance with no readback and no host write.
 */
export function advanceRng(rng: Tensor): Tensor {
  return rng.graph.apply(ADVANCE_RNG, [rng], null);
}
