/**
 * The most likely tokens at each generated position, for `top_logprobs`: the generation engine
 * keeps only the sampled token's log-prob, so the full distribution comes from one
 * teacher-forced pass over prompt + response (one graph per padded length, run under the
 * model's GPU lock), reading back only the logits rows of the response positions; the
 * log-softmax and the top-k are taken on the host in f64. Does not sample.
 */

import { compileGraph, type Executable } from "../graph/executable.ts";
import { Graph } from "../graph/graph.ts";
import { graphCache } from "../graph/graph_cache.ts";
import type { Tensor } from "../graph/tensor.ts";
import { padBatch, paddedLength } from "../model/padded_batch.ts";
import type { PolicyModel } from "../model/policy.ts";
import {
  buildHidden,
  causalAttentionFn,
  inferenceBuild,
  lmHead,
  type TokenInputs,
} from "../model/transformer.ts";
import { embedding } from "../ops/embedding.ts";
import { reshape } from "../ops/reshape.ts";
import { scale } from "../ops/unary.ts";
import type { LruCache } from "../util/lru_cache.ts";

/** One alternative token and its log-prob. */
export interface TokenLogprob {
  id: number;
  logprob: number;
}

/** Graphs kept (one per padded prompt + response length and temperature): the 2 most recent. */
const TOP_LOGPROB_GRAPHS = 2;

interface RowsGraph {
  exe: Executable;
  inputs: TokenInputs;
  rows: Tensor;
  logits: Tensor;
}

/** Computes top-k alternatives of generated tokens with a model's current weights. */
export class TopLogprobs {
  readonly #graphs: LruCache<RowsGraph>;

  constructor(readonly model: PolicyModel) {
    this.#graphs = graphCache(model.gpu, TOP_LOGPROB_GRAPHS);
  }

  /**
   * For each token of `response` (generated after `prompt`), the `k` most likely tokens at its
   * position under `temperature` (> 0), most likely first.
   */
  compute(
    prompt: readonly number[],
    response: readonly number[],
    k: number,
    temperature: number,
  ): Promise<TokenLogprob[][]> {
    if (response.length === 0 || k === 0) return Promise.resolve(response.map(() => []));
    return this.model.gpuLock.run(async () => {
      const sequence = [...prompt, ...response];
      const cfg = this.model.config;
      const seq = paddedLength(sequence.length);
      const rowCount = paddedLength(response.length);
      const graph = await this.#graph(seq, rowCount, temperature);
      const { ids, positions, segments } = padBatch([sequence], seq, cfg.vocabSize);
      // Position prompt.length - 1 + t predicts response token t.
      const rows = Int32Array.from(
        { length: rowCount },
        (_, t) => t < response.length ? prompt.length - 1 + t : 0,
      );
      await graph.exe.run(
        new Map([
          [graph.inputs.ids, ids],
          [graph.inputs.positions, positions],
          [graph.inputs.segments, segments],
          [graph.rows, rows],
        ]),
      );
      const [logits] = await graph.exe.read([graph.logits]);
      const vocab = cfg.vocabSize;
      return response.map((_, t) => topK(logits.subarray(t * vocab, (t + 1) * vocab), k));
    });
  }

  /** Frees the compiled graphs. */
  destroy(): void {
    this.#graphs.clear();
  }

  #graph(seq: number, rowCount: number, temperature: number): Promise<RowsGraph> {
    const key = `top_logprobs:${seq}->${rowCount}@${temperature}`;
    return this.#graphs.getOrCreate(key, () => this.#compile(key, seq, rowCount, temperature));
  }

  async #compile(
    key: string,
    seq: number,
    rowCount: number,
    temperature: number,
  ): Promise<RowsGraph> {
    const cfg = this.model.config;
    const g = new Graph();
    const input = (name: string) => g.input([1, seq], "i32", name);
    const inputs = {
      ids: input("ids"),
      positions: input("positions"),
      segments: input("segments"),
    };
    const rows = g.input([rowCount], "i32", "rows");
    const w = this.model.weights(g);
    const hidden = buildHidden(
      cfg,
      w,
      inputs,
      causalAttentionFn(inputs.segments),
      inferenceBuild(this.model.gpu, seq),
    );
    const picked = embedding(reshape(hidden, [seq, cfg.hiddenSize]), rows);
    let logits = lmHead(cfg, w, picked);
    if (temperature !== 1) logits = scale(logits, 1 / temperature);
    return { exe: await compileGraph(this.model.gpu, [logits], key), inputs, rows, logits };
  }
}

/** The `k` largest log-softmax entries of `logits`, largest first (ties: lower id first). */
export function topK(logits: ArrayLike<number>, k: number): TokenLogprob[] {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i]);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i] - max);
  const logZ = max + Math.log(sum);
  const best: TokenLogprob[] = [];
  for (let id = 0; id < logits.length; id++) {
    const logprob = logits[id] - logZ;
    if (best.length === k && logprob <= best[k - 1].logprob) continue;
    let at = best.length;
    while (at > 0 && best[at - 1].logprob < logprob) at--;
    best.splice(at, 0, { id, logprob });
    if (best.length > k) best.pop();
  }
  return best;
}
