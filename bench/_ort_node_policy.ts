/**
 * onnxruntime-node (its native CPU EP with default threads, one per core, as transformers.js
 * leaves them; or its WebGPU EP, Dawn on the machine's GPU) running a policy exported by
 * `src/export/`, as a JavaScript user outside the browser would:
 * the full-sequence graph for prefill, and the KV-cached graph for a greedy decode loop (the
 * prompt once, then one token per step with the present cache fed back as the past). Argmax on
 * the host. Bench-only: rft itself never depends on ORT.
 */

import * as ort from "onnxruntime-node";
import { policyOnnx } from "../src/export/export_onnx.ts";
import { pastNames, presentNames } from "../src/export/onnx_kv_cache.ts";
import { kvLayout } from "../src/model/model_config.ts";
import { concatBytes } from "../src/export/onnx_proto.ts";
import type { ModelConfig } from "../src/model/hf_config.ts";
import { argmax, type GreedyRun } from "./_ort_policy.ts";

/** An int64 tensor of `rows` (equal lengths). */
function int64Rows(rows: readonly (readonly number[])[]): ort.Tensor {
  const data = BigInt64Array.from(rows.flat(), (v) => BigInt(v));
  return new ort.Tensor("int64", data, [rows.length, rows[0].length]);
}

/** `batch` rows of `count` values `value(t)` (masks and positions of unpadded rows). */
function rowsOf(batch: number, count: number, value: (t: number) => number): number[][] {
  return Array.from({ length: batch }, () => Array.from({ length: count }, (_, t) => value(t)));
}

/** Inputs of the full-sequence graph for unpadded `rows`. */
function fullFeeds(rows: readonly (readonly number[])[]): Record<string, ort.Tensor> {
  return {
    input_ids: int64Rows(rows),
    attention_mask: int64Rows(rowsOf(rows.length, rows[0].length, () => 1)),
  };
}

/** An execution provider of onnxruntime-node that the benchmarks compare with. */
export type OrtNodeProvider = "cpu" | "webgpu";

/** Both onnxruntime-node sessions of one model. */
export class OrtNodePolicy {
  private constructor(
    readonly full: ort.InferenceSession,
    readonly cached: ort.InferenceSession,
    readonly cfg: ModelConfig,
  ) {}

  /**
   * Sessions of the full-sequence and the KV-cached export of `params` on `provider` (inputs and
   * outputs on the host, as a plain `run` gives them).
   */
  static async create(
    cfg: ModelConfig,
    params: ReadonlyMap<string, Float32Array>,
    provider: OrtNodeProvider = "cpu",
  ): Promise<OrtNodePolicy> {
    // default threads, as transformers.js; errors only
    const options = { executionProviders: [provider], logSeverityLevel: 3 as const };
    const session = (kvCache: boolean) =>
      ort.InferenceSession.create(concatBytes(policyOnnx(cfg, params, { kvCache }).model), options);
    return new OrtNodePolicy(await session(false), await session(true), cfg);
  }

  /**
   * The sessions on onnxruntime-node's WebGPU EP when `wanted`, or undefined: not wanted, or the
   * EP found no adapter it accepts (then one line on stderr says why; Dawn refuses llvmpipe).
   */
  static async webgpuIfWanted(
    wanted: boolean | undefined,
    cfg: ModelConfig,
    params: ReadonlyMap<string, Float32Array>,
  ): Promise<OrtNodePolicy | undefined> {
    if (!wanted) return undefined;
    try {
      return await OrtNodePolicy.create(cfg, params, "webgpu");
    } catch (err) {
      const reason = String((err as Error).message).split("\n")[0].slice(-160);
      console.error(`onnxruntime-node WebGPU EP not run: ${reason}`);
      return undefined;
    }
  }

  /** Logits of `rows` (equal lengths, unpadded) from the full-sequence graph. */
  async logits(rows: readonly (readonly number[])[]): Promise<Float32Array> {
    return (await this.full.run(fullFeeds(rows))).logits.data as Float32Array;
  }

  /** Runs the full-sequence graph on `rows` `count` times; milliseconds per run. */
  async timeForward(rows: readonly (readonly number[])[], count: number): Promise<number> {
    const feeds = fullFeeds(rows);
    const start = performance.now();
    for (let i = 0; i < count; i++) await this.full.run(feeds);
    return (performance.now() - start) / count;
  }

  /** Greedy decoding of `count` tokens per prompt (equal lengths) with the KV cache. */
  async greedy(prompts: readonly (readonly number[])[], count: number): Promise<GreedyRun> {
    const { layers, kvHeads, headDim } = kvLayout(this.cfg);
    const batch = prompts.length;
    const vocab = this.cfg.vocabSize;
    let past: Record<string, ort.Tensor> = {};
    for (let l = 0; l < layers; l++) {
      for (const name of Object.values(pastNames(l))) {
        past[name] = new ort.Tensor("float32", new Float32Array(0), [batch, kvHeads, 0, headDim]);
      }
    }
    const tokens = prompts.map((): number[] => []);
    let fresh = prompts;
    let length = 0;
    let firstStepMs = 0;
    const start = performance.now();
    for (let step = 0; step < count; step++) {
      const seq = fresh[0].length;
      length += seq;
      const out = await this.cached.run({
        input_ids: int64Rows(fresh),
        attention_mask: int64Rows(rowsOf(batch, length, () => 1)),
        position_ids: int64Rows(rowsOf(batch, seq, (t) => length - seq + t)),
        ...past,
      });
      const logits = out.logits.data as Float32Array;
      fresh = tokens.map((row, b) => {
        const token = argmax(logits, (b * seq + seq - 1) * vocab, vocab);
        row.push(token);
        return [token];
      });
      past = {};
      for (let l = 0; l < layers; l++) {
        const [p, n] = [pastNames(l), presentNames(l)];
        past[p.key] = out[n.key];
        past[p.value] = out[n.value];
      }
      if (step === 0) firstStepMs = performance.now() - start;
    }
    return { tokens, firstStepMs, laterStepsMs: performance.now() - start - firstStepMs };
  }

  /** Frees both sessions. */
  async release(): Promise<void> {
    await this.full.release();
    await this.cached.release();
  }
}
