/**
 * RoPE variants as data: HF's `rope_scaling` / `rope_parameters` types that the families people
 * fine-tune ship (`default`, `linear`, `dynamic`, `llama3`, `yarn`, `longrope`) read into a
 * {@link RopeScaling}, and each turned into what the kernels take: HF's f32 inverse frequencies
 * and the attention factor of yarn and longrope (`modeling_rope_utils.py`'s
 * `_compute_*_parameters`). The f64 reference of the same formulas is `rope_reference.ts`.
 */

import { ropeInvFreq } from "../ops/rope.ts";
import { type ConfigKeys, oneOfText } from "./config_keys.ts";

/** A RoPE variant with its parameters (HF names in camelCase). */
export type RopeScaling =
  | { type: "default" }
  | { type: "linear"; factor: number }
  /**
   * Scales the base once the sequence passes `max_position_embeddings`, which rft never runs
   * past (requests beyond it are refused): within it, the default frequencies.
   */
  | { type: "dynamic"; factor: number }
  | {
    type: "llama3";
    factor: number;
    lowFreqFactor: number;
    highFreqFactor: number;
    originalMaxPositions: number;
  }
  | {
    type: "yarn";
    factor: number;
    originalMaxPositions: number;
    betaFast: number;
    betaSlow: number;
    /** `attention_factor`, or the one HF derives from factor, mscale and mscale_all_dim. */
    attentionFactor: number;
    /** Round the correction range to whole dimensions (HF's default). */
    truncate: boolean;
  }
  /**
   * Phi-3.5 / Phi-4-mini's: each frequency divided by its `short_factor` while the sequence stays
   * within `original_max_position_embeddings` (by its `long_factor` past it, where HF re-rotates
   * the whole sequence; rft serves positions up to the original length only).
   */
  | {
    type: "longrope";
    shortFactor: number[];
    longFactor: number[];
    originalMaxPositions: number;
    /** `attention_factor`, or sqrt(1 + ln(factor) / ln(original)) for a factor > 1. */
    attentionFactor: number;
  };

/** The variants rft reads. */
export const ROPE_TYPES = ["default", "linear", "dynamic", "llama3", "yarn", "longrope"] as const;

/**
 * The variant described by `raw` (a `rope_scaling` object, or one of `rope_parameters`; null
 * or absent: default), read from key `key` of `keys`' file; `maxPositions` is the config's
 * `max_position_embeddings` (yarn's and longrope's default original length).
 */
export function readRopeScaling(
  keys: ConfigKeys,
  key: string,
  raw: unknown,
  maxPositions: number,
): RopeScaling {
  if (raw === null || raw === undefined) return { type: "default" };
  if (typeof raw !== "object" || Array.isArray(raw)) keys.fail(key, raw, "an object or null");
  const params = raw as Record<string, unknown>;
  const type = params.rope_type ?? params.type ?? "default";
  if (typeof type !== "string") keys.fail(`${key}.rope_type`, type, "a string");
  const number = (name: string, fallback?: number): number => {
    const value = params[name] ?? fallback;
    if (typeof value !== "number" || !(value > 0)) {
      keys.fail(`${key}.${name}`, params[name], "a positive number");
    }
    return value as number;
  };
  switch (type) {
    case "default":
      return { type };
    case "linear":
    case "dynamic":
      return { type, factor: number("factor") };
    case "llama3":
      return {
        type,
        factor: number("factor"),
        lowFreqFactor: number("low_freq_factor"),
        highFreqFactor: number("high_freq_factor"),
        originalMaxPositions: number("original_max_position_embeddings"),
      };
    case "yarn": {
      const factor = number("factor");
      return {
        type,
        factor,
        originalMaxPositions: number("original_max_position_embeddings", maxPositions),
        betaFast: number("beta_fast", 32),
        betaSlow: number("beta_slow", 1),
        attentionFactor: yarnAttentionFactor(params, factor, (name) => number(name)),
        truncate: params.truncate !== false,
      };
    }
    case "longrope":
      return readLongrope(keys, key, params, maxPositions, number);
  }
  return keys.fail(`${key}.rope_type`, type, oneOfText(ROPE_TYPES));
}

/**
 * longrope's factors and attention factor. The original length is the variant's own key or,
 * before transformers v5, the config's `original_max_position_embeddings`; without `factor` the
 * factor is max_position_embeddings over it (Phi-3's configs), as HF derives them.
 */
function readLongrope(
  keys: ConfigKeys,
  key: string,
  params: Record<string, unknown>,
  maxPositions: number,
  number: (name: string, fallback?: number) => number,
): RopeScaling {
  const factors = (name: string): number[] => {
    const list = params[name];
    if (!Array.isArray(list) || !list.every((f) => typeof f === "number" && f > 0)) {
      return keys.fail(`${key}.${name}`, list, "a list of positive numbers");
    }
    return list;
  };
  const topLevel = keys.get("original_max_position_embeddings");
  const original = number(
    "original_max_position_embeddings",
    typeof topLevel === "number" ? topLevel : maxPositions,
  );
  const factor = number("factor", maxPositions / original);
  const derived = factor <= 1 ? 1 : Math.sqrt(1 + Math.log(factor) / Math.log(original));
  const given = params.attention_factor;
  return {
    type: "longrope",
    shortFactor: factors("short_factor"),
    longFactor: factors("long_factor"),
    originalMaxPositions: original,
    attentionFactor: given === undefined || given === null ? derived : number("attention_factor"),
  };
}

/** HF's yarn `get_mscale`. */
function yarnMscale(scale: number, mscale = 1): number {
  return scale <= 1 ? 1 : 0.1 * mscale * Math.log(scale) + 1;
}

/** yarn's attention factor: given, or from mscale / mscale_all_dim, or 0.1 ln(factor) + 1. */
function yarnAttentionFactor(
  params: Record<string, unknown>,
  factor: number,
  number: (name: string) => number,
): number {
  if (params.attention_factor !== undefined && params.attention_factor !== null) {
    return number("attention_factor");
  }
  if (params.mscale && params.mscale_all_dim) {
    return yarnMscale(factor, number("mscale")) / yarnMscale(factor, number("mscale_all_dim"));
  }
  return yarnMscale(factor);
}

/** What the kernels take of a variant: inverse frequencies and the factor of cos and sin. */
export interface RopeFrequencies {
  invFreq: Float32Array<ArrayBuffer>;
  attentionFactor: number;
}

/**
 * HF's inverse frequencies of `scaling` for base `theta` and `rotaryDim` (the rotated dims of a
 * head), as f32 (the default table as torch computes it in f32, `ropeInvFreq`; each variant's
 * adjustment of it in f64, rounded once), and its attention factor.
 */
export function ropeFrequencies(
  theta: number,
  scaling: RopeScaling,
  rotaryDim: number,
): RopeFrequencies {
  const base = ropeInvFreq(theta, rotaryDim);
  const adjust = (f: (inv: number, i: number) => number) =>
    Float32Array.from(base, (inv, i) => f(inv, i));
  switch (scaling.type) {
    case "default":
    case "dynamic":
      return { invFreq: base, attentionFactor: 1 };
    case "linear":
      return { invFreq: adjust((inv) => inv / scaling.factor), attentionFactor: 1 };
    case "llama3":
      return { invFreq: adjust((inv) => llama3InvFreq(inv, scaling)), attentionFactor: 1 };
    case "yarn": {
      const ramp = yarnRamp(theta, scaling, rotaryDim);
      return {
        invFreq: adjust((inv, i) => inv / scaling.factor * ramp[i] + inv * (1 - ramp[i])),
        attentionFactor: scaling.attentionFactor,
      };
    }
    case "longrope":
      return {
        invFreq: adjust((inv, i) => inv / scaling.shortFactor[i]),
        attentionFactor: scaling.attentionFactor,
      };
  }
}

/** HF's llama3 adjustment of one inverse frequency. */
function llama3InvFreq(
  inv: number,
  s: Extract<RopeScaling, { type: "llama3" }>,
): number {
  const lowFreqWavelen = s.originalMaxPositions / s.lowFreqFactor;
  const highFreqWavelen = s.originalMaxPositions / s.highFreqFactor;
  const wavelen = 2 * Math.PI / inv;
  if (wavelen < highFreqWavelen) return inv;
  if (wavelen > lowFreqWavelen) return inv / s.factor;
  const smooth = (s.originalMaxPositions / wavelen - s.lowFreqFactor) /
    (s.highFreqFactor - s.lowFreqFactor);
  return (1 - smooth) * inv / s.factor + smooth * inv;
}

/**
 * yarn's interpolation weight of each frequency i < headDim / 2 (HF's `1 -
 * inv_freq_extrapolation_factor`): 0 keeps the frequency, 1 divides it by the factor.
 */
function yarnRamp(
  theta: number,
  s: Extract<RopeScaling, { type: "yarn" }>,
  headDim: number,
): number[] {
  const correctionDim = (rotations: number) =>
    headDim * Math.log(s.originalMaxPositions / (rotations * 2 * Math.PI)) /
    (2 * Math.log(theta));
  let low = correctionDim(s.betaFast);
  let high = correctionDim(s.betaSlow);
  if (s.truncate) [low, high] = [Math.floor(low), Math.ceil(high)];
  [low, high] = [Math.max(low, 0), Math.min(high, headDim - 1)];
  if (low === high) high += 0.001;
  return Array.from(
    { length: headDim / 2 },
    (_, i) => Math.min(1, Math.max(0, (i - low) / (high - low))),
  );
}
