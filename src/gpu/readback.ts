/**
 * The one way rft copies GPU data to the host. A readback costs >= 10 ms in Deno (measured on
 * the fallback adapter), so callers gather everything they need and read it in one call.
 */

import { beginActivity } from "../util/activity.ts";

/** A region of a GPU buffer to read. */
export interface ReadRequest {
  buffer: GPUBuffer;
  /** Bytes to read from the start of the buffer (multiple of 4). */
  bytes: number;
  offset?: number;
}

/**
 * Copies every requested region to staging buffers in one submit, maps them together and
 * returns their contents in request order.
 */
export async function readBuffers(
  device: GPUDevice,
  requests: readonly ReadRequest[],
): Promise<ArrayBuffer[]> {
  if (requests.length === 0) return [];
  const encoder = device.createCommandEncoder({ label: "readback" });
  const staging = requests.map((req) => {
    const size = Math.max(4, Math.ceil(req.bytes / 4) * 4);
    const target = device.createBuffer({
      label: "readback-staging",
      size,
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
    if (req.bytes > 0) encoder.copyBufferToBuffer(req.buffer, req.offset ?? 0, target, 0, size);
    return target;
  });
  device.queue.submit([encoder.finish()]);
  {
    // Long on a graph's first run on a CPU adapter, whose driver compiles the shaders then.
    using _waiting = beginActivity("waiting for the GPU (a first run also compiles its shaders)");
    await Promise.all(staging.map((b) => b.mapAsync(GPUMapMode.READ)));
  }
  return staging.map((b, i) => {
    const copy = b.getMappedRange().slice(0, requests[i].bytes);
    b.unmap();
    b.destroy();
    return copy;
  });
}

/** Reads `count` f32 values from the start of `buffer`. */
export async function readF32(
  device: GPUDevice,
  buffer: GPUBuffer,
  count: number,
): Promise<Float32Array> {
  const [data] = await readBuffers(device, [{ buffer, bytes: count * 4 }]);
  return new Float32Array(data);
}
