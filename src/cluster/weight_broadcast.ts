/**
 * Weights across processes: each synced version is one object `v<version>` of the run's object
 * store, the values of what training moves (`trainableVariables`: every parameter, or with LoRA
 * the adapter alone, the explorers holding the same frozen base) in their order as f32 or, to
 * halve the bytes, bfloat16 (`util/half.ts`) (1 MB chunks, streamed out of one readback), and the KV
 * key `weights` names the newest version. An explorer streams the object into one preallocated
 * buffer and writes each variable into its GPU buffer under the model's GPU lock. Versions older
 * than the ones an explorer can still be asked for are deleted.
 */

import { readVariables } from "../graph/read_variables.ts";
import { shapeSize } from "../graph/tensor.ts";
import type { PolicyModel } from "../model/policy.ts";
import { fromBf16, toBf16 } from "../util/half.ts";
import { KV_KEYS, type NatsLink } from "./nats_link.ts";

/** Bytes per object chunk. */
export const CHUNK_BYTES = 1 << 20;

/** How weights travel (`cluster.weight_dtype`). */
export type WeightDType = "f32" | "bf16";

/** The KV record of the newest weights. */
export interface WeightsRecord {
  version: number;
  /** Bytes of the object. */
  bytes: number;
  dtype: WeightDType;
}

/** Bytes of the trained variables of `model` as `dtype`. */
export function weightBytes(model: PolicyModel, dtype: WeightDType = "f32"): number {
  let values = 0;
  for (const v of model.trainableVariables()) values += shapeSize(v.shape);
  return values * (dtype === "bf16" ? 2 : 4);
}

/**
 * Publishes `model`'s weights as version `version` in `dtype` and names it the newest; deletes
 * versions below `keepFrom`. Returns the seconds it took.
 */
export async function publishWeights(
  link: NatsLink,
  model: PolicyModel,
  version: number,
  keepFrom: number,
  dtype: WeightDType = "f32",
): Promise<number> {
  const started = performance.now();
  const values = await model.gpuLock.run(() =>
    readVariables(model.gpu.device, model.trainableVariables())
  );
  const arrays = [...values.values()].map((a) =>
    dtype === "bf16" ? new Uint8Array(toBf16(a).buffer) : new Uint8Array(a.buffer)
  );
  const name = `v${version}`;
  await link.retry(
    `publishing weights ${name}`,
    () => link.weights.put({ name, options: { max_chunk_size: CHUNK_BYTES } }, chunks(arrays)),
  );
  const record: WeightsRecord = { version, bytes: weightBytes(model, dtype), dtype };
  await link.write(KV_KEYS.weights, record);
  const stored = await link.retry("listing weights", () => link.weights.list());
  for (const info of stored) {
    if (info.name.startsWith("v") && Number(info.name.slice(1)) < keepFrom) {
      await link.retry(`deleting weights ${info.name}`, () => link.weights.delete(info.name));
    }
  }
  return (performance.now() - started) / 1000;
}

/** The bytes of `arrays` one after another, in chunks of at most {@link CHUNK_BYTES}. */
function chunks(arrays: readonly Uint8Array<ArrayBuffer>[]): ReadableStream<Uint8Array> {
  let index = 0, offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (index === arrays.length) return controller.close();
      const bytes = arrays[index];
      const end = Math.min(offset + CHUNK_BYTES, bytes.length);
      controller.enqueue(bytes.subarray(offset, end));
      offset = end;
      if (offset === bytes.length) index++, offset = 0;
    },
  });
}

/** The newest published weights, or undefined before the first. */
export async function newestWeights(link: NatsLink): Promise<WeightsRecord | undefined> {
  return await link.read<WeightsRecord>(KV_KEYS.weights);
}

/**
 * Loads version `version`, published in `dtype`, into `model` (see the file comment); returns
 * the seconds it took.
 */
export async function loadWeights(
  link: NatsLink,
  model: PolicyModel,
  version: number,
  dtype: WeightDType = "f32",
): Promise<number> {
  const started = performance.now();
  const fetched = await link.retry(
    `loading weights v${version}`,
    () => fetchWeights(link, model, version, dtype),
  );
  const data = dtype === "bf16"
    ? new Uint8Array(fromBf16(new Uint16Array(fetched.buffer)).buffer)
    : fetched;
  await model.gpuLock.run(() => {
    let offset = 0;
    for (const v of model.trainableVariables()) {
      const bytes = shapeSize(v.shape) * 4;
      model.gpu.device.queue.writeBuffer(v.buffer, 0, data, offset, bytes);
      model.gpu.variableTextures.written(v.buffer);
      offset += bytes;
    }
    return Promise.resolve();
  });
  return (performance.now() - started) / 1000;
}

/** Object `v<version>` streamed into one buffer of `model`'s parameter bytes in `dtype`. */
async function fetchWeights(
  link: NatsLink,
  model: PolicyModel,
  version: number,
  dtype: WeightDType,
): Promise<Uint8Array<ArrayBuffer>> {
  const name = `v${version}`;
  const object = await link.weights.get(name);
  if (!object) {
    throw new Error(`Cannot load weights version ${version}: no object ${name} in the run's store`);
  }
  const expected = weightBytes(model, dtype);
  const data = new Uint8Array(expected);
  let filled = 0;
  for await (const chunk of object.data) {
    if (filled + chunk.length > expected) break;
    data.set(chunk, filled);
    filled += chunk.length;
  }
  await object.error;
  if (filled !== expected || object.info.size !== expected) {
    throw new Error(
      `Cannot load weights version ${version}: object ${name} has ${object.info.size} bytes; ` +
        `expected ${expected} for this model's parameters in ${dtype}`,
    );
  }
  return data;
}
