/**
 * How one engine batch lays its requests out: a slot per sample (the `n` samples of a request
 * share its prompt's prefill), each slot's stop ids, length limit, sampling settings and seed,
 * and the padded prompt and cache lengths. Host data only; `engine.ts` runs the batch.
 */

import type { ModelConfig } from "../model/model_config.ts";
import type { LogitsOptions } from "./logits_batch.ts";
import { paddedLength } from "../model/padded_batch.ts";
import { packSamplingSettings } from "./sampler.ts";

/**
 * How to sample and when to stop. Penalties, logit bias and constraints (`LogitsOptions`) change
 * which token is sampled, never the log-prob reported for it (the model's own, tempered).
 */
export interface GenerateOptions extends LogitsOptions {
  /** Samples per prompt (they share one prefill). Default 1. */
  n?: number;
  /** 0 = greedy. Default 1. */
  temperature?: number;
  /** Keep the k most likely tokens (0 = off). */
  topK?: number;
  /** Keep the smallest set of tokens with this much probability (1 = off). */
  topP?: number;
  /** Most tokens generated per sample. Default 64. */
  maxTokens?: number;
  /** Token ids that end a sample (kept as its last token). Default: the model's EOS ids. */
  stop?: readonly number[];
  /** Seed of the sampler; the same seed gives the same samples. Default: random. */
  seed?: number;
}

/**
 * One prompt with its own sampling settings, stop ids, length limit and seed; requests of one
 * `GenerationEngine.generateRequests` call share a batch. Sample `j` of a request draws from a
 * seed derived from (`seed`, j) only, so it gives the same tokens in any batch.
 */
export interface GenerationRequest extends GenerateOptions {
  /** Prompt token ids (not empty). */
  prompt: readonly number[];
}

/** What the decode loop needs to know of each slot (one sample of one request). */
export interface SlotPlan {
  request: number;
  promptLength: number;
  maxTokens: number;
  stop: ReadonlySet<number>;
}

/** A batch's slots and the host data its graphs take. */
export interface BatchPlan {
  plans: SlotPlan[];
  /** Sampling settings of every slot (`packSamplingSettings`). */
  settings: Float32Array<ArrayBuffer>;
  /** The RNG seed of every slot. */
  seeds: number[];
  /** Each slot's request (prompt). */
  slotPrompt: Int32Array<ArrayBuffer>;
  /** Each slot's prompt length. */
  lengths: Int32Array<ArrayBuffer>;
  /** Decode steps: the largest maxTokens. */
  steps: number;
  /** Prompts padded to this length for the prefill. */
  promptLen: number;
  /** Cache rows per slot. */
  maxLen: number;
}

/** Default of {@link GenerateOptions.maxTokens}. */
export const DEFAULT_MAX_TOKENS = 64;

/** Spacing of the seeds of a request's samples (the golden ratio in 32 bits). */
export const SEED_STRIDE = 0x9e3779b1;

/** A seed for a request that names none. */
export function randomSeed(): number {
  return Math.floor(Math.random() * 2 ** 32);
}

/**
 * Throws unless `request` (number `index` of a call) can run on a model with `config`: n and
 * maxTokens positive integers, a non-empty prompt of in-vocabulary ids, prompt + maxTokens
 * within the model's positions.
 */
export function checkRequest(config: ModelConfig, request: GenerationRequest, index = 0): void {
  const { prompt, n = 1, maxTokens = DEFAULT_MAX_TOKENS } = request;
  const fail = (detail: string): never => {
    throw new Error(`Cannot generate from request ${index}: ${detail}`);
  };
  if (!Number.isInteger(n) || n < 1) fail(`n must be >= 1, received ${n}`);
  if (!Number.isInteger(maxTokens) || maxTokens < 1) {
    fail(`maxTokens must be >= 1, received ${maxTokens}`);
  }
  if (prompt.length === 0) fail("the prompt is empty");
  const bad = prompt.findIndex((id) => !Number.isInteger(id) || id < 0 || id >= config.vocabSize);
  if (bad >= 0) fail(`token ${bad} is ${prompt[bad]}, outside [0, ${config.vocabSize})`);
  if (prompt.length + maxTokens > config.maxPositions) {
    fail(
      `prompt of ${prompt.length} tokens + maxTokens ${maxTokens} exceeds the model's ${config.maxPositions} positions`,
    );
  }
}

/** The slots of `requests` (checked, not empty) on a model with config `cfg`. */
export function planBatch(cfg: ModelConfig, requests: readonly GenerationRequest[]): BatchPlan {
  const plans = requests.flatMap((r, request): SlotPlan[] => {
    const plan = {
      request,
      promptLength: r.prompt.length,
      maxTokens: r.maxTokens ?? DEFAULT_MAX_TOKENS,
      stop: new Set(r.stop ?? cfg.eosTokenIds),
    };
    return Array.from({ length: r.n ?? 1 }, () => plan);
  });
  const settings = packSamplingSettings(
    plans.map(({ request }) => {
      const { temperature = 1, topK, topP } = requests[request];
      return { temperature, topK, topP };
    }),
  );
  const seeds = requests.flatMap((r) => {
    const seed = r.seed ?? randomSeed();
    return Array.from({ length: r.n ?? 1 }, (_, j) => (seed + Math.imul(j + 1, SEED_STRIDE)) >>> 0);
  });
  return {
    plans,
    settings,
    seeds,
    slotPrompt: Int32Array.from(plans, (p) => p.request),
    lengths: Int32Array.from(plans, (p) => p.promptLength),
    steps: Math.max(...plans.map((p) => p.maxTokens)),
    promptLen: paddedLength(Math.max(...plans.map((p) => p.promptLength))),
    maxLen: Math.min(
      cfg.maxPositions,
      paddedLength(Math.max(...plans.map((p) => p.promptLength + p.maxTokens))),
    ),
  };
}
