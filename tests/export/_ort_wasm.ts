/**
 * onnxruntime-web's wasm execution provider for the export tests: one thread (no worker
 * scripts to load), runtime files from node_modules. Tests only: rft never depends on ORT.
 */

import * as ort from "onnxruntime-web/webgpu";

ort.env.wasm.numThreads = 1;
ort.env.wasm.wasmPaths = new URL("../../node_modules/onnxruntime-web/dist/", import.meta.url).href;
ort.env.logLevel = "error";

export { ort };

/** An ORT wasm session of an encoded model (with its external data file, if any). */
export function wasmSession(
  model: Uint8Array,
  externalData?: { path: string; data: Uint8Array },
): Promise<ort.InferenceSession> {
  return ort.InferenceSession.create(model, {
    executionProviders: ["wasm"],
    externalData: externalData ? [externalData] : undefined,
  });
}

/** An int64 ORT tensor of `values` [rows, values.length / rows]. */
export function int64Tensor(values: readonly number[], rows: number): ort.Tensor {
  const data = BigInt64Array.from(values, (v) => BigInt(v));
  return new ort.Tensor("int64", data, [rows, values.length / rows]);
}
