/**
 * An f64 reference of HF's RoPE variants (`modeling_rope_utils.py`'s `_compute_*_parameters`,
 * written as there: the default table, then each variant's `torch.where` and ramp formulas),
 * independent of `rope_scaling.ts`'s f32 tables. The whole-model reference rotates with it, and
 * the tests compare the kernels' tables against it.
 */

import type { RopeScaling } from "./rope_scaling.ts";

/** The inverse frequencies and attention factor of a variant, in f64. */
export interface ReferenceRope {
  invFreq: Float64Array;
  attentionFactor: number;
}

/**
 * HF's inverse frequencies of `scaling` with base `theta` for the `rotaryDim` rotated dims of a
 * head; `seqLen` and `maxPositions` are dynamic NTK's current length and `max_position_embeddings`
 * (longrope's short factors apply: rft serves positions within its original length only).
 */
export function referenceRope(
  theta: number,
  scaling: RopeScaling,
  rotaryDim: number,
  seqLen = 0,
  maxPositions = Infinity,
): ReferenceRope {
  const dim = rotaryDim;
  const exponents = Float64Array.from({ length: dim / 2 }, (_, j) => (2 * j) / dim);
  const defaultInv = (base: number) => exponents.map((e) => 1 / base ** e);
  switch (scaling.type) {
    case "default":
      return { invFreq: defaultInv(theta), attentionFactor: 1 };
    case "linear":
      return { invFreq: defaultInv(theta).map((f) => f / scaling.factor), attentionFactor: 1 };
    case "dynamic": {
      const len = Math.max(seqLen, maxPositions);
      const base = theta *
        ((scaling.factor * len) / maxPositions - (scaling.factor - 1)) ** (dim / (dim - 2));
      return { invFreq: defaultInv(base), attentionFactor: 1 };
    }
    case "llama3":
      return { invFreq: llama3(defaultInv(theta), scaling), attentionFactor: 1 };
    case "yarn":
      return { invFreq: yarn(theta, scaling, dim), attentionFactor: scaling.attentionFactor };
    case "longrope":
      return {
        invFreq: exponents.map((e, j) => 1 / (scaling.shortFactor[j] * theta ** e)),
        attentionFactor: scaling.attentionFactor,
      };
  }
}

/** `_compute_llama3_parameters` on the default table `invFreq`. */
function llama3(invFreq: Float64Array, s: Extract<RopeScaling, { type: "llama3" }>): Float64Array {
  const lowFreqWavelen = s.originalMaxPositions / s.lowFreqFactor;
  const highFreqWavelen = s.originalMaxPositions / s.highFreqFactor;
  return invFreq.map((inv) => {
    const wavelen = (2 * Math.PI) / inv;
    const invLlama = wavelen > lowFreqWavelen ? inv / s.factor : inv;
    const smoothFactor = (s.originalMaxPositions / wavelen - s.lowFreqFactor) /
      (s.highFreqFactor - s.lowFreqFactor);
    const smoothed = ((1 - smoothFactor) * invLlama) / s.factor + smoothFactor * invLlama;
    const isMediumFreq = !(wavelen < highFreqWavelen) && !(wavelen > lowFreqWavelen);
    return isMediumFreq ? smoothed : invLlama;
  });
}

/** `_compute_yarn_parameters`' inverse frequencies. */
function yarn(theta: number, s: Extract<RopeScaling, { type: "yarn" }>, dim: number) {
  const findCorrectionDim = (numRotations: number) =>
    (dim * Math.log(s.originalMaxPositions / (numRotations * 2 * Math.PI))) /
    (2 * Math.log(theta));
  let low = findCorrectionDim(s.betaFast);
  let high = findCorrectionDim(s.betaSlow);
  if (s.truncate) {
    low = Math.floor(low);
    high = Math.ceil(high);
  }
  low = Math.max(low, 0);
  high = Math.min(high, dim - 1);
  if (low === high) high += 0.001;
  return Float64Array.from({ length: dim / 2 }, (_, j) => {
    const posFreq = theta ** ((2 * j) / dim);
    const extrapolation = 1 / posFreq;
    const interpolation = 1 / (s.factor * posFreq);
    const ramp = Math.min(1, Math.max(0, (j - low) / (high - low)));
    const extrapolationFactor = 1 - ramp;
    return interpolation * (1 - extrapolationFactor) + extrapolation * extrapolationFactor;
  });
}
