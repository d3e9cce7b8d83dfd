/**
 * onnxruntime-web running a policy exported by `src/export/` (`exportedPolicy` builds a random
 * model of a benchmark shape on rft and exports the same weights): one WebGPU session on ORT's own
 * device (logits left on it unless read) and one 2-thread wasm session, both created once per
 * run. Gives a forward of unpadded token batches and a greedy decode loop without KV cache (the
 * export has none: each step runs the whole sequence again and reads its logits back).
 * Bench-only: rft itself never depends on ORT.
 */

import type { InferenceSession, Tensor } from "onnxruntime-web/webgpu";
import { policyOnnx } from "../src/export/export_onnx.ts";
import { concatBytes } from "../src/export/onnx_proto.ts";
import type { GpuContext } from "../src/gpu/device.ts";
import { type ModelConfig, parseHfConfig } from "../src/model/hf_config.ts";
import { initParameters } from "../src/model/init.ts";
import { createModel, type PolicyModel } from "../src/model/policy.ts";
import { configureOrt } from "./_ort.ts";
import { modelShape } from "./_model_shapes.ts";

/** An execution provider of the comparison. */
export type OrtProvider = "webgpu" | "wasm";

/** What one greedy run produced and how long its steps took. */
export interface GreedyRun {
  /** Generated tokens of each row. */
  tokens: number[][];
  /** Milliseconds of the first step (the prompt) and of all later steps together. */
  firstStepMs: number;
  laterStepsMs: number;
}

/** Both sessions of one exported model. */
export class OrtPolicy {
  private constructor(
    readonly sessions: Readonly<Record<OrtProvider, InferenceSession>>,
    readonly device: GPUDevice,
    readonly vocab: number,
  ) {}

  /** Creates the WebGPU and the wasm session of the ONNX model `bytes` (logits of `vocab`). */
  static async create(bytes: Uint8Array, vocab: number): Promise<OrtPolicy> {
    const ort = configureOrt();
    const logSeverityLevel = 3; // errors only: not ORT's note that shape ops run on the CPU
    const webgpu = await ort.InferenceSession.create(bytes, {
      executionProviders: ["webgpu"],
      preferredOutputLocation: "gpu-buffer",
      logSeverityLevel,
    });
    const wasm = await ort.InferenceSession.create(bytes, {
      executionProviders: ["wasm"],
      logSeverityLevel,
    });
    const device = await ort.env.webgpu.device as GPUDevice;
    return new OrtPolicy({ webgpu, wasm }, device, vocab);
  }

  /** Logits of `rows` (equal lengths, no padding) on `provider`, read back to the host. */
  async logits(provider: OrtProvider, rows: readonly (readonly number[])[]): Promise<Float32Array> {
    const out = await this.#run(provider, rows);
    try {
      return await out.getData(true) as Float32Array;
    } finally {
      out.dispose();
    }
  }

  /** Runs `rows` `count` times on `provider`, logits left in place; milliseconds per run. */
  async timeForward(
    provider: OrtProvider,
    rows: readonly (readonly number[])[],
    count: number,
  ): Promise<number> {
    const feeds = this.#feeds(rows);
    const start = performance.now();
    for (let i = 0; i < count; i++) (await this.sessions[provider].run(feeds)).logits.dispose();
    if (provider === "webgpu") await this.device.queue.onSubmittedWorkDone();
    return (performance.now() - start) / count;
  }

  /**
   * Greedy decoding of `steps` tokens per prompt (equal prompt lengths): each step runs the whole
   * sequence so far, reads the logits back and appends the argmax of each row's last position.
   */
  async greedy(
    provider: OrtProvider,
    prompts: readonly (readonly number[])[],
    steps: number,
  ): Promise<GreedyRun> {
    const rows = prompts.map((p) => [...p]);
    const tokens = prompts.map((): number[] => []);
    let firstStepMs = 0;
    const start = performance.now();
    for (let step = 0; step < steps; step++) {
      const logits = await this.logits(provider, rows);
      const seq = rows[0].length;
      rows.forEach((row, b) => {
        const token = argmax(logits, (b * seq + seq - 1) * this.vocab, this.vocab);
        row.push(token);
        tokens[b].push(token);
      });
      if (step === 0) firstStepMs = performance.now() - start;
    }
    return { tokens, firstStepMs, laterStepsMs: performance.now() - start - firstStepMs };
  }

  /** Frees both sessions. */
  async release(): Promise<void> {
    await this.sessions.webgpu.release();
    await this.sessions.wasm.release();
  }

  #feeds(rows: readonly (readonly number[])[]): Record<string, Tensor> {
    const ort = configureOrt();
    const dims = [rows.length, rows[0].length];
    const ids = BigInt64Array.from(rows.flat(), (id) => BigInt(id));
    return {
      input_ids: new ort.Tensor("int64", ids, dims),
      attention_mask: new ort.Tensor("int64", new BigInt64Array(ids.length).fill(1n), dims),
    };
  }

  async #run(provider: OrtProvider, rows: readonly (readonly number[])[]): Promise<Tensor> {
    return (await this.sessions[provider].run(this.#feeds(rows))).logits;
  }
}

/** `batch` rows of `length` deterministic token ids below `vocab` (all rows differ). */
export function tokenRows(batch: number, length: number, vocab: number): number[][] {
  return Array.from(
    { length: batch },
    (_, b) => Array.from({ length }, (_, t) => (7 * t + 13 * b + 1) % vocab),
  );
}

/** Index of the largest of `count` values from `offset` (the first on ties). */
export function argmax(values: Float32Array, offset: number, count: number): number {
  let best = 0;
  for (let i = 1; i < count; i++) if (values[offset + i] > values[offset + best]) best = i;
  return best;
}

/** A random model of a benchmark shape on rft, and the same weights exported to ORT. */
export interface ExportedPolicy {
  model: PolicyModel;
  ort: OrtPolicy;
  /** The shape's config.json, parsed, and the weights, for other runtimes. */
  raw: Record<string, unknown>;
  cfg: ModelConfig;
  params: ReadonlyMap<string, Float32Array>;
  /** Parameter count and ONNX model bytes, for the report. */
  parameters: number;
  onnxBytes: number;
}

/** Builds model shape `name` (`_model_shapes.ts`) with seeded weights on rft and on ORT. */
export async function exportedPolicy(name: string, gpu: GpuContext): Promise<ExportedPolicy> {
  const raw = modelShape(name);
  const cfg = parseHfConfig(raw);
  const params = initParameters(cfg, 1);
  const model = await createModel(raw, params, { gpu });
  const bytes = concatBytes(policyOnnx(cfg, params).model);
  const parameters = [...params.values()].reduce((n, p) => n + p.length, 0);
  return {
    model,
    ort: await OrtPolicy.create(bytes, cfg.vocabSize),
    raw,
    cfg,
    params,
    parameters,
    onnxBytes: bytes.length,
  };
}
