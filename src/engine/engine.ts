/**
 * KV-cached batched generation on the GPU. Prompts are prefilled once (each prompt's cache is
 * then copied to its `n` sample slots), and decoding runs in blocks of steps: every step is one
 * submit whose inputs come from the previous step's outputs on the GPU (the sampled token) or
 * from host values known in advance (positions, RNG steps), so the host reads back once per
 * block, not once per token. Each request of a batch has its own sampling settings, seed, stop
 * ids and maxTokens (per-row settings on the GPU, per-row stops and limits on the host). Stop
 * tokens are found on the host at block ends; a slot that has stopped, or reached its maxTokens,
 * keeps its cache untouched (position -1) for the rest of the block. Merging requests from
 * concurrent callers is `generation_batcher.ts`'s job, not this file's.
 */

import type { GpuContext } from "../gpu/device.ts";
import type { Mutex } from "../util/mutex.ts";
import { compileGraph, type Executable, type Feed, recordable } from "../graph/executable.ts";
import { Graph } from "../graph/graph.ts";
import { graphCache } from "../graph/graph_cache.ts";
import type { Tensor } from "../graph/tensor.ts";
import type { ModelConfig } from "../model/model_config.ts";
import {
  type AttentionFn,
  buildHidden,
  inferenceBuild,
  lmHead,
  rotate,
  rotatesWholeHeads,
  type WeightLookup,
} from "../model/transformer.ts";
import { cachedAttention } from "../ops/cached_attention.ts";
import { embedding } from "../ops/embedding.ts";
import { writeKvCache } from "../ops/kv_cache.ts";
import { packedRopeKvCache, ropeKvCache, ropeKvCacheTakes } from "../ops/rope_kv_cache.ts";
import { reshape } from "../ops/reshape.ts";
import { LruCache } from "../util/lru_cache.ts";
import {
  type BatchPlan,
  checkRequest,
  type GenerateOptions,
  type GenerationRequest,
  planBatch,
  randomSeed,
  SEED_STRIDE,
  type SlotPlan,
} from "./batch_plan.ts";
import { type BlockHistory, DecodeBuffers } from "./decode_buffers.ts";
import { createKvCacheSet, destroyKvCacheSet, type KvCacheSet } from "./kv_cache_set.ts";
import {
  packRngState,
  RNG_WIDTH,
  sampleTokens,
  SETTINGS_WIDTH,
  temperedLogprobs,
} from "./sampler.ts";
import type { Variable } from "../graph/tensor.ts";
import { clearCounts, createCounts, LogitsBatch, needsLogitsProcessing } from "./logits_batch.ts";
import { countTokens, PENALTIES_WIDTH, processLogits } from "./logits_processor.ts";

export { checkRequest, type GenerateOptions, type GenerationRequest } from "./batch_plan.ts";

/** One generated sample. */
export interface GeneratedSample {
  /** Index of the prompt (request) it continues. */
  prompt: number;
  /** Generated token ids (a stop token, if one ended it, is the last). */
  tokens: number[];
  /** log p(token) under the sampling temperature (T = 1 when greedy), one per token. */
  logprobs: number[];
  finishReason: "stop" | "length";
}

/** Counters for benchmarks and tests. */
export interface EngineStats {
  readbacks: number;
  decodeSteps: number;
  generatedTokens: number;
}

interface StepGraph {
  exe: Executable;
  /** The KV caches the graph reads and writes (dropping them drops the graph). */
  caches: KvCacheSet;
  /** With logits processors: their inputs and the token counts it updates. */
  processors?: { bias: Tensor; penalties: Tensor; counts: Variable };
  ids: Tensor;
  positions: Tensor;
  settings: Tensor;
  rng: Tensor;
  tokens: Tensor;
  logprobs: Tensor;
}

interface PrefillGraph extends StepGraph {
  last: Tensor;
  slotPrompt: Tensor;
}

/**
 * What the engine needs of a policy (a `PolicyModel` is one): its GPU, architecture and current
 * weights as variables of a graph. The engine keeps no weights of its own.
 */
export interface WeightSource {
  readonly gpu: GpuContext;
  readonly config: ModelConfig;
  /** Serializes GPU work on the weights (generation against a weight copy or train step). */
  readonly gpuLock: Mutex;
  /** The weights as variables of `g`, by HF parameter name. */
  weights(g: Graph): WeightLookup;
}

/**
 * Compiled graphs an engine keeps: the prefill and decode graphs of the two most recent batch
 * shapes (prompt count and length, slots, cache length).
 */
export const ENGINE_GRAPHS = 4;
/** KV cache sets an engine keeps: the slot and prompt caches of the two most recent shapes. */
export const ENGINE_KV_CACHE_SETS = 4;
/** Token-count variables an engine keeps (for penalties): those of the two latest slot counts. */
const ENGINE_COUNTS = 2;

/** What the steps of one batch write besides their graphs' own buffers. */
interface StepBuffers {
  io: DecodeBuffers;
  /** The batch's logits processors, when a request asks for one. */
  processing?: LogitsBatch;
  /** Their token counts. */
  counts?: Variable;
}

/** Generation over a policy model's current weights. */
export class GenerationEngine {
  readonly stats: EngineStats = { readbacks: 0, decodeSteps: 0, generatedTokens: 0 };
  readonly #graphs: LruCache<StepGraph | PrefillGraph>;
  readonly #caches: LruCache<KvCacheSet>;
  readonly #counts: LruCache<Variable>;

  /** `blockSize`: decode steps per readback (1 in batches with a constrained request). */
  constructor(readonly model: WeightSource, readonly blockSize = 16) {
    this.#graphs = graphCache(model.gpu, ENGINE_GRAPHS);
    this.#caches = new LruCache(ENGINE_KV_CACHE_SETS, (set) => {
      this.#graphs.deleteWhere((graph) => graph.caches === set);
      destroyKvCacheSet(set);
    });
    this.#counts = new LruCache(ENGINE_COUNTS, (counts) => {
      this.#graphs.deleteWhere((graph) => graph.processors?.counts === counts);
      counts.buffer.destroy();
    });
  }

  /**
   * Compiled graphs and KV cache sets held now (at most {@link ENGINE_GRAPHS} and
   * {@link ENGINE_KV_CACHE_SETS}).
   */
  get held(): { graphs: number; kvCacheSets: number } {
    return { graphs: this.#graphs.size, kvCacheSets: this.#caches.size };
  }

  get #gpu(): GpuContext {
    return this.model.gpu;
  }

  /**
   * Generates `n` samples for each prompt (token ids), all with the same options; sample `j` of
   * prompt `p` is sample `p * n + j` of the result.
   */
  async generate(
    prompts: readonly (readonly number[])[],
    options: GenerateOptions = {},
  ): Promise<GeneratedSample[]> {
    const n = options.n ?? 1;
    const seed = options.seed ?? randomSeed();
    // Prompt p's seed makes its samples draw the seeds of slots p * n .. p * n + n - 1.
    const requests = prompts.map((prompt, p) => ({
      ...options,
      prompt,
      seed: (seed + Math.imul(p * n, SEED_STRIDE)) >>> 0,
    }));
    return (await this.generateRequests(requests)).flat();
  }

  /**
   * Runs `requests` as one batch: one prefill per prompt, whose cache is copied to the request's
   * `n` slots, then decoding with each slot's own sampling settings, seed, stop ids and
   * maxTokens, reading back once per block of steps. Returns each request's samples in order.
   * The model's weights must not change until it returns (hold `model.gpuLock`, as
   * `model.generate` does): decode steps after the first reuse the first one's copies of them.
   */
  async generateRequests(
    requests: readonly GenerationRequest[],
  ): Promise<GeneratedSample[][]> {
    const cfg = this.model.config;
    requests.forEach((r, i) => checkRequest(cfg, r, i));
    if (requests.length === 0) return [];
    const batch = planBatch(cfg, requests);
    const slots = batch.plans.length;
    const slotCaches = await this.#cache(slots, batch.maxLen, "slot");
    const promptCaches = await this.#cache(requests.length, batch.maxLen, "prompt");
    const { device } = this.#gpu;
    const processing = needsLogitsProcessing(requests)
      ? new LogitsBatch(device, requests, batch.plans.map((p) => p.request), cfg.vocabSize)
      : undefined;
    const counts = processing && await this.#countsOf(slots);
    if (counts) clearCounts(device, counts);
    const block = processing?.constrained ? 1 : Math.min(this.blockSize, batch.steps);
    const io = new DecodeBuffers(device, slots, block, batch.settings);
    const samples: GeneratedSample[] = batch.plans.map((p) => ({
      prompt: p.request,
      tokens: [],
      logprobs: [],
      finishReason: "length",
    }));
    const buffers: StepBuffers = { io, processing, counts };
    try {
      const prefill = await this.#prefill(requests, batch, promptCaches, slotCaches, buffers);
      await this.#decode(batch, prefill, slotCaches, buffers, samples);
    } finally {
      io.destroy();
      processing?.destroy();
    }
    return requests.map((_, r) => samples.filter((s) => s.prompt === r));
  }

  /**
   * Runs the prefill of every prompt at once: it writes the prompts' caches, copies them to their
   * slots and samples each slot's first token into the history's step 0.
   */
  async #prefill(
    requests: readonly GenerationRequest[],
    batch: BatchPlan,
    promptCaches: KvCacheSet,
    slotCaches: KvCacheSet,
    { io, processing, counts }: StepBuffers,
  ): Promise<StepGraph> {
    const { promptLen, slotPrompt, lengths } = batch;
    const count = requests.length;
    const slots = slotPrompt.length;
    const prefill = await this.#prefillGraph(count, promptLen, slots, promptCaches, counts);
    const ids = new Int32Array(count * promptLen);
    const positions = new Int32Array(count * promptLen).fill(-1);
    requests.forEach(({ prompt }, i) =>
      prompt.forEach((id, t) => {
        ids[i * promptLen + t] = id;
        positions[i * promptLen + t] = t;
      })
    );
    const last = Int32Array.from(requests, ({ prompt }, i) => i * promptLen + prompt.length - 1);
    await prefill.exe.run(
      new Map<Tensor, Feed>([
        [prefill.ids, ids],
        [prefill.positions, positions],
        [prefill.last, last],
        [prefill.slotPrompt, slotPrompt],
        [prefill.settings, batch.settings],
        [prefill.rng, packRngState(batch.seeds, 0)],
        ...processorFeeds(prefill, processing),
      ]),
      {
        after: (encoder) => {
          copyPromptCaches(encoder, promptCaches, slotCaches, slotPrompt, lengths);
          io.record(prefill, 0)(encoder);
        },
      },
    );
    return prefill;
  }

  /**
   * Decodes after the prefill (whose tokens are step 0): blocks of steps recorded into one
   * command buffer each, read back and collected into `samples` at each block's end, until every
   * slot stopped or the longest maxTokens is reached.
   */
  async #decode(
    batch: BatchPlan,
    prefill: StepGraph,
    caches: KvCacheSet,
    { io, processing, counts }: StepBuffers,
    samples: GeneratedSample[],
  ): Promise<void> {
    const { plans, steps, seeds } = batch;
    const { device } = this.#gpu;
    const decode = await this.#decodeGraph(plans.length, caches, counts);
    const finished = new Array<boolean>(plans.length).fill(false);
    let previous = prefill;
    let inBlock = 1; // the prefill sampled step 0
    // The block's steps so far, submitted together before its readback.
    let encoder: GPUCommandEncoder | undefined;
    for (let step = 1;; step++) {
      if (inBlock === io.block || step === steps) {
        if (encoder) device.queue.submit([encoder.finish()]);
        encoder = undefined;
        this.#collect(await this.#readHistory(io, inBlock), samples, finished, plans);
        processing?.update(samples.map((s) => s.tokens), finished);
        inBlock = 0;
        if (step === steps || finished.every(Boolean)) return;
      }
      // A slot past its own maxTokens is masked (position -1: its cache stays untouched).
      const positions = Int32Array.from(
        plans,
        (p, s) => (finished[s] || step >= p.maxTokens ? -1 : p.promptLength + step - 1),
      );
      const feeds = io.writeStep(inBlock, positions, packRngState(seeds, step));
      encoder ??= recordable() ? device.createCommandEncoder({ label: "decode block" }) : undefined;
      await decode.exe.run(
        new Map<Tensor, Feed>([
          [decode.ids, previous.exe.buffer(previous.tokens)],
          [decode.positions, feeds.positions],
          [decode.settings, feeds.settings],
          [decode.rng, feeds.rng],
          ...processorFeeds(decode, processing),
        ]),
        { after: io.record(decode, inBlock), encoder },
      );
      this.stats.decodeSteps++;
      previous = decode;
      inBlock++;
    }
  }

  async #readHistory(io: DecodeBuffers, steps: number) {
    this.stats.readbacks++;
    return await io.readHistory(steps);
  }

  /** Appends a block's tokens to the unfinished samples; marks those that stop or are full. */
  #collect(
    read: BlockHistory,
    samples: GeneratedSample[],
    finished: boolean[],
    plans: readonly SlotPlan[],
  ): void {
    const slots = samples.length;
    for (let i = 0; i < read.steps; i++) {
      for (let s = 0; s < slots; s++) {
        if (finished[s]) continue;
        const token = read.tokens[i * slots + s];
        samples[s].tokens.push(token);
        samples[s].logprobs.push(read.logprobs[i * slots + s]);
        this.stats.generatedTokens++;
        if (plans[s].stop.has(token)) {
          finished[s] = true;
          samples[s].finishReason = "stop";
        } else if (samples[s].tokens.length >= plans[s].maxTokens) {
          finished[s] = true;
        }
      }
    }
  }

  #countsOf(slots: number): Promise<Variable> {
    const vocab = this.model.config.vocabSize;
    return this.#counts.getOrCreate(
      `${slots}x${vocab}`,
      () => createCounts(this.#gpu.device, slots, vocab),
    );
  }

  #cache(slots: number, maxLen: number, label: string): Promise<KvCacheSet> {
    const key = `${label}:${slots}x${maxLen}`;
    return this.#caches.getOrCreate(
      key,
      () => createKvCacheSet(this.#gpu, this.model.config, slots, maxLen, `kv.${key}`),
    );
  }

  /** Attention that appends k, v at `positions` to the caches, then attends over them. */
  #cachedAttention(g: Graph, caches: KvCacheSet, positions: Tensor): AttentionFn {
    return (layer, q, k, v, { rotary, scale, window, softcap, qkv }) => {
      if (rotary && rotary.positions !== positions) {
        throw new Error(`Cannot rotate layer ${layer}'s keys: positions other than the cache's`);
      }
      const keyCache = g.variable(caches.keys[layer]);
      const valueCache = g.variable(caches.values[layer]);
      const whole = rotary && rotatesWholeHeads(rotary, q.lastDim);
      if (rotary && whole && ropeKvCacheTakes(q.lastDim)) {
        // One dispatch rotates the queries and writes both caches, the keys rotated (reading q,
        // k and v side by side where one product gave them so).
        const { queries, keys, values } = qkv
          ? packedRopeKvCache(qkv, keyCache, valueCache, positions, rotary.invFreq)
          : ropeKvCache(q, k, v, keyCache, valueCache, positions, rotary.invFreq);
        return cachedAttention(queries, keys, values, positions, { scale, window, softcap });
      }
      // The keys are rotated as they are written (one dispatch; partial rotary: before); the
      // queries by RoPE.
      const keys = whole
        ? writeKvCache(keyCache, k, positions, { invFreq: rotary.invFreq })
        : writeKvCache(keyCache, rotate(k, rotary), positions);
      const values = writeKvCache(valueCache, v, positions);
      return cachedAttention(rotate(q, rotary), keys, values, positions, {
        scale,
        window,
        softcap,
      });
    };
  }

  async #prefillGraph(
    prompts: number,
    promptLen: number,
    slots: number,
    caches: KvCacheSet,
    counts: Variable | undefined,
  ): Promise<PrefillGraph> {
    const key = `prefill:${prompts}x${promptLen}->${slots}x${caches.maxLen}${
      counts ? "+logits" : ""
    }`;
    return await this.#graphs.getOrCreate(
      key,
      () => this.#compilePrefill(key, prompts, promptLen, slots, caches, counts),
    ) as PrefillGraph;
  }

  async #compilePrefill(
    key: string,
    prompts: number,
    promptLen: number,
    slots: number,
    caches: KvCacheSet,
    counts: Variable | undefined,
  ): Promise<PrefillGraph> {
    const cfg = this.model.config;
    const g = new Graph();
    const ids = g.input([prompts, promptLen], "i32", "ids");
    const positions = g.input([prompts, promptLen], "i32", "positions");
    const last = g.input([prompts], "i32", "last");
    const slotPrompt = g.input([slots], "i32", "slot_prompt");
    const settings = g.input([slots, SETTINGS_WIDTH], "f32", "settings");
    const rng = g.input([slots, RNG_WIDTH], "u32", "rng");
    const w = this.model.weights(g);
    const hidden = buildHidden(
      cfg,
      w,
      { ids, positions },
      this.#cachedAttention(g, caches, positions),
      inferenceBuild(this.#gpu, prompts * promptLen),
    );
    const lastHidden = embedding(reshape(hidden, [prompts * promptLen, cfg.hiddenSize]), last);
    const slotLogits = embedding(lmHead(cfg, w, lastHidden), slotPrompt);
    const { tokens, logprobs, processors, outputs } = sample(slotLogits, settings, rng, counts);
    const exe = await compileGraph(this.#gpu, outputs, key);
    return {
      exe,
      caches,
      processors,
      ids,
      positions,
      last,
      slotPrompt,
      settings,
      rng,
      tokens,
      logprobs,
    };
  }

  async #decodeGraph(
    slots: number,
    caches: KvCacheSet,
    counts: Variable | undefined,
  ): Promise<StepGraph> {
    const key = `decode:${slots}x${caches.maxLen}${counts ? "+logits" : ""}`;
    return await this.#graphs.getOrCreate(
      key,
      () => this.#compileDecode(key, slots, caches, counts),
    );
  }

  async #compileDecode(
    key: string,
    slots: number,
    caches: KvCacheSet,
    counts: Variable | undefined,
  ): Promise<StepGraph> {
    const cfg = this.model.config;
    const g = new Graph();
    const ids = g.input([slots, 1], "u32", "ids");
    const positions = g.input([slots, 1], "i32", "positions");
    const settings = g.input([slots, SETTINGS_WIDTH], "f32", "settings");
    const rng = g.input([slots, RNG_WIDTH], "u32", "rng");
    const w = this.model.weights(g);
    const hidden = buildHidden(
      cfg,
      w,
      { ids, positions },
      this.#cachedAttention(g, caches, positions),
      inferenceBuild(this.#gpu, slots),
    );
    const logits = lmHead(cfg, w, reshape(hidden, [slots, cfg.hiddenSize]));
    const { tokens, logprobs, processors, outputs } = sample(logits, settings, rng, counts);
    const exe = await compileGraph(this.#gpu, outputs, key);
    return { exe, caches, processors, ids, positions, settings, rng, tokens, logprobs };
  }

  /** Frees caches and compiled graphs. */
  destroy(): void {
    this.#caches.clear();
    this.#graphs.clear();
  }
}

/**
 * The sampling tail of a step graph: tokens and their (unprocessed, tempered) log-probs from
 * `logits` [slots, vocab]; with `counts`, the logits processors run before sampling (their
 * inputs added to the graph) and the sampled tokens are counted. `outputs`: what to compile.
 */
function sample(logits: Tensor, settings: Tensor, rng: Tensor, counts: Variable | undefined) {
  if (!counts) {
    const { tokens, logprobs } = sampleTokens(logits, settings, rng);
    return { tokens, logprobs, processors: undefined, outputs: [tokens, logprobs] };
  }
  const g = logits.graph;
  const [slots, vocab] = logits.shape;
  const bias = g.input([slots, vocab], "f32", "logit_bias");
  const penalties = g.input([slots, PENALTIES_WIDTH], "f32", "penalties");
  const seen = g.variable(counts);
  const { tokens } = sampleTokens(processLogits(logits, bias, seen, penalties), settings, rng);
  const logprobs = temperedLogprobs(logits, settings, tokens);
  return {
    tokens,
    logprobs,
    processors: { bias, penalties, counts },
    outputs: [tokens, logprobs, countTokens(seen, tokens)],
  };
}

/** The feeds of a graph's processor inputs from a batch's buffers (none without processors). */
function processorFeeds(graph: StepGraph, batch: LogitsBatch | undefined): [Tensor, Feed][] {
  if (!graph.processors || !batch) return [];
  return [[graph.processors.bias, batch.bias], [graph.processors.penalties, batch.penalties]];
}

/** Copies each prompt's cached rows into the cache slots of its samples. */
function copyPromptCaches(
  encoder: GPUCommandEncoder,
  from: KvCacheSet,
  to: KvCacheSet,
  slotPrompt: Int32Array,
  lengths: Int32Array,
): void {
  const slotBytes = to.maxLen * to.rowBytes;
  for (let layer = 0; layer < to.keys.length; layer++) {
    for (
      const [src, dst] of [[from.keys[layer], to.keys[layer]], [
        from.values[layer],
        to.values[layer],
      ]]
    ) {
      slotPrompt.forEach((p, s) => {
        encoder.copyBufferToBuffer(
          src.buffer,
          p * slotBytes,
          dst.buffer,
          s * slotBytes,
          lengths[s] * to.rowBytes,
        );
      });
    }
  }
}
