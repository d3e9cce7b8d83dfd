/**
 * onnxruntime-web and onnxruntime-node as matmul baselines: one MatMul model with symbolic dims
 * (written with `src/export/onnx_proto.ts`), one session per execution provider kept for the
 * whole run, and timing helpers; `configureOrt` also serves the model benchmarks. The WebGPU
 * session runs on ORT's own device with inputs and outputs left on it; the wasm session uses 2
 * threads; onnxruntime-node's CPU EP (MLAS) its default threads, one per core.
 * Bench-only: rft itself never depends on ORT.
 */

import * as ortNode from "onnxruntime-node";
import * as ort from "onnxruntime-web/webgpu";
import { concatBytes, encodeOnnxModel, type OnnxDim } from "../src/export/onnx_proto.ts";

const FILE_URL = Symbol("rft.fileUrl");

/**
 * ORT's threaded wasm build fetches its worker script and imports it from a `blob:` URL, which
 * Deno refuses inside npm code ("Only file and data URLs are supported"). This makes `fetch` of a
 * `file:` URL remember its URL on the blob, and `URL.createObjectURL` of such a blob return the
 * original `file:` URL, so ORT imports the file directly.
 */
function letOrtImportFileUrls(): void {
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    const response = await realFetch(input, init);
    if (!url.startsWith("file:")) return response;
    const blob = await response.blob();
    Object.defineProperty(blob, FILE_URL, { value: url });
    return new Proxy(response, {
      get: (
        target,
        key,
      ) => (key === "blob" ? () => Promise.resolve(blob) : Reflect.get(target, key)),
    });
  };
  const realCreate = URL.createObjectURL;
  URL.createObjectURL = (object: Blob) =>
    (object as unknown as Record<symbol, string | undefined>)[FILE_URL] ?? realCreate(object);
}

let configured = false;

/** Sets ORT up once for Deno: 2 wasm threads, runtime files from node_modules, errors only. */
export function configureOrt(): typeof ort {
  if (!configured) {
    letOrtImportFileUrls();
    ort.env.wasm.numThreads = 2;
    ort.env.wasm.wasmPaths = new URL("../node_modules/onnxruntime-web/dist/", import.meta.url)
      .href;
    ort.env.logLevel = "error";
    configured = true;
  }
  return ort;
}

/** A model computing `C = A @ B` with A [M, K], B [K, N] (symbolic dims unless given). */
function matmulModel(m: OnnxDim = "M", k: OnnxDim = "K", n: OnnxDim = "N") {
  return concatBytes(
    encodeOnnxModel({
      name: "matmul",
      nodes: [{ opType: "MatMul", inputs: ["A", "B"], outputs: ["C"] }],
      inputs: [{ name: "A", shape: [m, k] }, { name: "B", shape: [k, n] }],
      outputs: [{ name: "C", shape: [m, n] }],
    }).model,
  );
}

/** A prepared matmul that can be timed repeatedly: `time` returns milliseconds per run. */
export interface Timed {
  time(minMs: number): Promise<number>;
  dispose(): void;
}

/** An ORT execution provider on host data: onnxruntime-web's wasm or onnxruntime-node's CPU. */
export type HostProvider = "wasm" | "node";

/** The ORT sessions, created once. */
export class OrtMatmul {
  private constructor(
    readonly webgpu: ort.InferenceSession,
    readonly wasm: ort.InferenceSession,
    readonly node: ortNode.InferenceSession,
    readonly device: GPUDevice,
  ) {}

  /** Creates the WebGPU, the 2-thread wasm and the onnxruntime-node session of the model. */
  static async create(): Promise<OrtMatmul> {
    configureOrt();
    const model = matmulModel();
    const webgpu = await ort.InferenceSession.create(model, {
      executionProviders: ["webgpu"],
      preferredOutputLocation: "gpu-buffer",
    });
    const wasm = await ort.InferenceSession.create(model, { executionProviders: ["wasm"] });
    const node = await ortNode.InferenceSession.create(model, {
      executionProviders: ["cpu"],
      logSeverityLevel: 3,
    });
    const device = await ort.env.webgpu.device as GPUDevice;
    return new OrtMatmul(webgpu, wasm, node, device);
  }

  /** The WebGPU EP on A [m, k] @ B [k, n], inputs uploaded once to ORT's device. */
  onWebgpu(
    a: Float32Array<ArrayBuffer>,
    b: Float32Array<ArrayBuffer>,
    m: number,
    k: number,
    n: number,
  ): Timed {
    const upload = (data: Float32Array<ArrayBuffer>, dims: number[]) => {
      const buffer = this.device.createBuffer({
        size: data.byteLength,
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
      });
      this.device.queue.writeBuffer(buffer, 0, data);
      return { buffer, tensor: ort.Tensor.fromGpuBuffer(buffer, { dataType: "float32", dims }) };
    };
    const inA = upload(a, [m, k]);
    const inB = upload(b, [k, n]);
    const feeds = { A: inA.tensor, B: inB.tensor };
    return {
      time: (minMs) =>
        timeRuns(async (count) => {
          const start = performance.now();
          for (let i = 0; i < count; i++) (await this.webgpu.run(feeds)).C.dispose();
          await this.device.queue.onSubmittedWorkDone();
          return (performance.now() - start) / count;
        }, minMs),
      dispose() {
        inA.buffer.destroy();
        inB.buffer.destroy();
      },
    };
  }

  /** `provider` on A [m, k] @ B [k, n], host arrays in and out. */
  onHost(
    provider: HostProvider,
    a: Float32Array<ArrayBuffer>,
    b: Float32Array<ArrayBuffer>,
    m: number,
    k: number,
    n: number,
  ): Timed {
    const Tensor = provider === "wasm" ? ort.Tensor : ortNode.Tensor;
    const feeds = {
      A: new Tensor("float32", a, [m, k]),
      B: new Tensor("float32", b, [k, n]),
    };
    const session = provider === "wasm" ? this.wasm : this.node;
    return {
      time: (minMs) =>
        timeRuns(async (count) => {
          const start = performance.now();
          for (let i = 0; i < count; i++) await session.run(feeds);
          return (performance.now() - start) / count;
        }, minMs),
      dispose() {},
    };
  }

  /** Frees the onnxruntime-node session (onnxruntime-web's live until the process exits). */
  async release(): Promise<void> {
    await this.node.release();
  }
}

/** Warms up, then times enough runs to last about `minMs`; milliseconds per run. */
export async function timeRuns(
  runs: (count: number) => Promise<number>,
  minMs: number,
): Promise<number> {
  const once = Math.max(await runs(1), await runs(1));
  return await runs(Math.max(2, Math.ceil(minMs / once)));
}
