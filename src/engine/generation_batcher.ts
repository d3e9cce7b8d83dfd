/**
 * Merges generation requests from many concurrent callers into shared engine batches: everything
 * submitted within one macrotask tick, or while the engine ran the previous batch, goes into the
 * next `generateRequests` call, up to a number of sample slots per batch. Batches run one at a
 * time under the model's GPU lock. Requests under a token constraint (constrained decoding,
 * which reads back after every step) are batched apart from the others, so they never slow the
 * others' blocks of steps; within each kind, first come, first batched. Does not split one
 * request across batches: a request bigger than the cap runs alone.
 */

import {
  checkRequest,
  type GeneratedSample,
  type GenerationEngine,
  type GenerationRequest,
} from "./engine.ts";

/** Options of {@link GenerationBatcher}. */
export interface GenerationBatcherOptions {
  /** Most sample slots (sum of the requests' `n`) in one batch. Default 64. */
  maxBatchSlots?: number;
  /**
   * The policy version of the weights, read under the GPU lock as each batch starts and
   * returned with each of its requests' samples. Default: always 0.
   */
  policyVersion?: () => number;
}

/** The samples of one request and the policy version of the batch that generated them. */
export interface BatchedSamples {
  /** The request's `n` samples (`prompt` is 0: the request's own prompt). */
  samples: GeneratedSample[];
  policyVersion: number;
}

/** Counters for logging and tests. */
export interface BatcherStats {
  /** Engine batches run. */
  batches: number;
  /** Requests served by those batches. */
  requests: number;
}

interface Pending {
  request: GenerationRequest;
  resolve: (result: BatchedSamples) => void;
  reject: (err: unknown) => void;
}

/** Serves {@link GenerationRequest}s from concurrent callers in shared engine batches. */
export class GenerationBatcher {
  readonly stats: BatcherStats = { batches: 0, requests: 0 };
  readonly maxBatchSlots: number;
  readonly #policyVersion: () => number;
  readonly #queue: Pending[] = [];
  #draining = false;

  constructor(readonly engine: GenerationEngine, options: GenerationBatcherOptions = {}) {
    const { maxBatchSlots = 64, policyVersion = () => 0 } = options;
    if (!Number.isInteger(maxBatchSlots) || maxBatchSlots < 1) {
      throw new Error(
        `Cannot create a generation batcher: maxBatchSlots must be an integer >= 1, received ${maxBatchSlots}`,
      );
    }
    this.maxBatchSlots = maxBatchSlots;
    this.#policyVersion = policyVersion;
  }

  /**
   * Queues `request` for the next batch; resolves with its samples once that batch is done.
   * An invalid request is rejected at once, without touching the batch of others.
   */
  submit(request: GenerationRequest): Promise<BatchedSamples> {
    try {
      checkRequest(this.engine.model.config, request);
    } catch (err) {
      return Promise.reject(err);
    }
    const { promise, resolve, reject } = Promise.withResolvers<BatchedSamples>();
    this.#queue.push({ request, resolve, reject });
    if (!this.#draining) {
      this.#draining = true;
      setTimeout(() => this.#drain(), 0);
    }
    return promise;
  }

  /** Runs batches until the queue is empty. */
  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#takeBatch();
      try {
        const { policyVersion, results } = await this.engine.model.gpuLock.run(async () => ({
          policyVersion: this.#policyVersion(),
          results: await this.engine.generateRequests(batch.map((p) => p.request)),
        }));
        this.stats.batches++;
        this.stats.requests += batch.length;
        batch.forEach((p, i) =>
          p.resolve({ samples: results[i].map((s) => ({ ...s, prompt: 0 })), policyVersion })
        );
      } catch (err) {
        for (const p of batch) p.reject(err);
      }
    }
    this.#draining = false;
  }

  /**
   * The oldest queued request and the next ones of its kind (constrained or not) whose slots
   * fit the cap, in queue order.
   */
  #takeBatch(): Pending[] {
    const constrained = (p: Pending) => p.request.constraint !== undefined;
    const kind = constrained(this.#queue[0]);
    const batch: Pending[] = [];
    let slots = 0;
    for (const pending of this.#queue) {
      if (constrained(pending) !== kind) continue;
      const n = pending.request.n ?? 1;
      if (batch.length > 0 && slots + n > this.maxBatchSlots) break;
      batch.push(pending);
      slots += n;
    }
    const taken = new Set(batch);
    const rest = this.#queue.filter((p) => !taken.has(p));
    this.#queue.splice(0, this.#queue.length, ...rest);
    return batch;
  }
}
