/**
 * onnxruntime-node's native CPU EP (MLAS, one thread per core by default) as a matmul baseline:
 * the same MatMul model as `_ort.ts`, one session kept for the run. Bench-only: rft itself never
 * depends on ORT.
 */

import * as ort from "onnxruntime-node";
import { matmulModel, type Timed, timeRuns } from "./_ort.ts";

/** One onnxruntime-node session of the MatMul model on its CPU EP. */
export class OrtNodeMatmul {
  private constructor(readonly session: ort.InferenceSession) {}

  /** Creates the session (default threads, errors only). */
  static async create(): Promise<OrtNodeMatmul> {
    const session = await ort.InferenceSession.create(matmulModel(), {
      executionProviders: ["cpu"],
      logSeverityLevel: 3,
    });
    return new OrtNodeMatmul(session);
  }

  /** A [m, k] @ B [k, n] on the host. */
  on(
    a: Float32Array<ArrayBuffer>,
    b: Float32Array<ArrayBuffer>,
    m: number,
    k: number,
    n: number,
  ): Timed {
    const feeds = {
      A: new ort.Tensor("float32", a, [m, k]),
      B: new ort.Tensor("float32", b, [k, n]),
    };
    return {
      time: (minMs) =>
        timeRuns(async (count) => {
          const start = performance.now();
          for (let i = 0; i < count; i++) await this.session.run(feeds);
          return (performance.now() - start) / count;
        }, minMs),
      dispose() {},
    };
  }

  /** Frees the session. */
  async release(): Promise<void> {
    await this.session.release();
  }
}
