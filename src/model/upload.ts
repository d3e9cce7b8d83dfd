/**
 * Puts checkpoint tensors on the GPU as f32 `Variable`s. F32 bytes are copied as they are; F16
 * and BF16 are uploaded packed and widened on the GPU by `shaders/convert_to_f32.wgsl`, in chunks
 * bound at aligned offsets so tensors beyond the storage-binding limit work too. Other dtypes
 * are rejected. A tensor passes through host memory whole (no streaming from disk).
 */

import { TENSOR_USAGE } from "../gpu/buffer_pool.ts";
import type { GpuContext } from "../gpu/device.ts";
import {
  encodeDispatches,
  grid1d,
  packParams,
  prepareDispatch,
  releaseDispatch,
} from "../gpu/dispatch.ts";
import { shapeSize, type Variable } from "../graph/tensor.ts";
import { type Checkpoint, DTYPE_BYTES, type SafetensorsDType } from "./safetensors.ts";
import { InputError } from "../util/input_error.ts";

/** Checkpoint dtypes that can become f32 variables. */
export const UPLOADABLE_DTYPES: readonly SafetensorsDType[] = ["F32", "F16", "BF16"];

/** A tensor's raw little-endian bytes as a checkpoint stores them. */
export interface RawTensor {
  readonly name: string;
  readonly dtype: SafetensorsDType;
  readonly shape: readonly number[];
  readonly bytes: Uint8Array<ArrayBuffer>;
}

/** Options of {@link uploadTensor}. */
export interface UploadOptions {
  /**
   * Largest storage binding of one conversion launch; defaults to the device's
   * `maxStorageBufferBindingSize` (tests lower it to exercise chunking).
   */
  maxBindingBytes?: number;
}

const WG = 256;

/** Uploads `tensor` and widens it to f32 on the GPU; resolves once the data is in place. */
export async function uploadTensor(
  gpu: GpuContext,
  tensor: RawTensor,
  options: UploadOptions = {},
): Promise<Variable> {
  const { name, dtype, shape, bytes } = tensor;
  const where = "Cannot upload to the GPU";
  checkUploadable(gpu, tensor, where);
  const n = shapeSize(shape);
  if (bytes.byteLength !== n * DTYPE_BYTES[dtype]) {
    throw new Error(
      `${where}: tensor "${name}" has ${bytes.byteLength} bytes; ${dtype} shape [${shape}] needs ${
        n * DTYPE_BYTES[dtype]
      }`,
    );
  }
  const chunk = dtype === "F32" ? 0 : chunkElements(gpu, options, where);
  const { device } = gpu;
  device.pushErrorScope("out-of-memory");
  device.pushErrorScope("validation");
  const buffer = device.createBuffer({
    label: name,
    size: Math.max(4, n * 4),
    usage: TENSOR_USAGE,
  });
  const thrown =
    await (dtype === "F32"
      ? Promise.resolve(writePadded(device.queue, buffer, bytes))
      : convertOnGpu(gpu, tensor, buffer, chunk)).then(() => undefined, (err: unknown) => err);
  const validation = await device.popErrorScope();
  const outOfMemory = await device.popErrorScope();
  const gpuError = validation ?? outOfMemory;
  if (thrown || gpuError) {
    buffer.destroy();
    throw thrown ?? new Error(`${where}: tensor "${name}": ${gpuError!.message}`);
  }
  return { name, shape, dtype: "f32", buffer };
}

/** Reads tensor `name` from `checkpoint` and uploads it with {@link uploadTensor}. */
export async function loadVariable(
  gpu: GpuContext,
  checkpoint: Checkpoint,
  name: string,
  options: UploadOptions = {},
): Promise<Variable> {
  const info = checkpoint.info(name);
  checkUploadable(gpu, info, `Cannot load ${checkpoint.fileOf.get(name)!.path}`);
  return uploadTensor(gpu, { ...info, bytes: await checkpoint.read(name) }, options);
}

/** Throws unless the dtype converts and the f32 result fits in one GPU buffer. */
function checkUploadable(
  gpu: GpuContext,
  { name, dtype, shape }: Omit<RawTensor, "bytes">,
  where: string,
) {
  if (!UPLOADABLE_DTYPES.includes(dtype)) {
    throw new InputError(
      `${where}: tensor "${name}" has dtype "${dtype}"; expected ${UPLOADABLE_DTYPES.join(", ")}`,
    );
  }
  const bytes = shapeSize(shape) * 4;
  if (bytes > gpu.device.limits.maxBufferSize) {
    throw new InputError(
      `${where}: tensor "${name}" needs ${bytes} bytes as f32; the device's maxBufferSize is ${gpu.device.limits.maxBufferSize}`,
    );
  }
}

/**
 * Elements per conversion launch: within the binding limit for the f32 output, and a multiple
 * of half the offset alignment so both the 2-byte input and 4-byte output offsets stay aligned.
 */
function chunkElements(gpu: GpuContext, options: UploadOptions, where: string): number {
  const align = gpu.device.limits.minStorageBufferOffsetAlignment;
  const maxBinding = options.maxBindingBytes ?? gpu.device.limits.maxStorageBufferBindingSize;
  const step = Math.max(2, align / 2);
  const count = Math.floor(maxBinding / 4 / step) * step;
  if (count === 0) {
    throw new Error(
      `${where}: a storage binding limit of ${maxBinding} bytes is below ${
        step * 4
      }, the smallest aligned chunk`,
    );
  }
  return count;
}

/** Uploads the packed 16-bit data and converts it into `out`, one launch per chunk. */
async function convertOnGpu(
  gpu: GpuContext,
  { name, dtype, shape, bytes }: RawTensor,
  out: GPUBuffer,
  chunk: number,
) {
  const { device } = gpu;
  const n = shapeSize(shape);
  const packed = device.createBuffer({
    label: `${name}:packed`,
    size: Math.max(4, alignUp(bytes.byteLength, 4)),
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST,
  });
  writePadded(device.queue, packed, bytes);
  const spec = {
    shader: "convert_to_f32",
    entryPoint: "main",
    constants: { FORMAT: dtype === "BF16" ? 1 : 0, WG },
    bindings: ["read", "read_write"] as const,
    params: true,
  };
  const launches = [];
  for (let first = 0; first < n; first += chunk) {
    const count = Math.min(chunk, n - first);
    launches.push(prepareDispatch(
      gpu,
      spec,
      [
        { buffer: packed, offset: first * 2, size: alignUp(count * 2, 4) },
        { buffer: out, offset: first * 4, size: count * 4 },
      ],
      packParams([count]),
      grid1d(Math.ceil(count / 2 / WG)),
    ));
  }
  const dispatches = await Promise.all(launches);
  const encoder = device.createCommandEncoder({ label: `upload ${name}` });
  encodeDispatches(encoder, dispatches, `convert ${name}`);
  device.queue.submit([encoder.finish()]);
  await device.queue.onSubmittedWorkDone();
  dispatches.forEach(releaseDispatch);
  packed.destroy();
}

/** Writes `bytes` at the start of `buffer`, zero-padding a trailing partial word. */
function writePadded(queue: GPUQueue, buffer: GPUBuffer, bytes: Uint8Array<ArrayBuffer>) {
  const whole = bytes.byteLength - (bytes.byteLength % 4);
  if (whole > 0) queue.writeBuffer(buffer, 0, bytes, 0, whole);
  if (whole < bytes.byteLength) {
    const tail = new Uint8Array(4);
    tail.set(bytes.subarray(whole));
    queue.writeBuffer(buffer, whole, tail);
  }
}

function alignUp(value: number, multiple: number): number {
  return Math.ceil(value / multiple) * multiple;
}
