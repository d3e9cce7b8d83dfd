/**
 * Puts checkpoint tensors on the GPU as `Variable`s, f32 or (frozen weights) half precision. To
 * f32: F32 bytes are copied as they are; F16 and BF16 are uploaded packed and widened on the GPU by
 * `shaders/convert_to_f32.wgsl`, in chunks bound at aligned offsets so tensors beyond the
 * storage-binding limit work too. To bf16 or f16 (`storeAs`): the bytes of that format are copied
 * as they are, others converted on the host first (one tensor at a time). Other dtypes are
 * rejected. A tensor passes through host memory whole; a model loads one tensor at a time.
 * Shader: shaders/convert_to_f32.wgsl
 * Reference: src/reference/convert.ts
 * Test: tests/model/convert_test.ts
 */

import { TENSOR_USAGE } from "../gpu/buffer_pool.ts";
import type { GpuContext } from "../gpu/device.ts";
import { encodeDispatches, grid1d, prepareDispatch, releaseDispatch } from "../gpu/dispatch.ts";
import { packParams } from "../gpu/kernel_params.ts";
import { dataBytes, shapeSize, type Variable } from "../graph/tensor.ts";
import { fromBf16, fromF16, toBf16, toF16 } from "../util/half.ts";
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
  /** The variable's dtype: f32 (default) or a half-precision format for a frozen weight. */
  storeAs?: "f32" | "bf16" | "f16";
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
  const storeAs = options.storeAs ?? "f32";
  const chunk = dtype === "F32" || storeAs !== "f32" ? 0 : chunkElements(gpu, options, where);
  const { device } = gpu;
  device.pushErrorScope("out-of-memory");
  device.pushErrorScope("validation");
  const buffer = device.createBuffer({
    label: name,
    size: Math.max(4, dataBytes(shape, storeAs)),
    usage: TENSOR_USAGE,
  });
  const write = async () => {
    if (storeAs !== "f32") writePadded(device.queue, buffer, halfBytes(tensor, storeAs));
    else if (dtype === "F32") writePadded(device.queue, buffer, bytes);
    else await convertOnGpu(gpu, tensor, buffer, chunk);
  };
  const thrown = await write().then(() => undefined, (err: unknown) => err);
  const validation = await device.popErrorScope();
  const outOfMemory = await device.popErrorScope();
  const gpuError = validation ?? outOfMemory;
  if (thrown || gpuError) {
    buffer.destroy();
    throw thrown ?? new Error(`${where}: tensor "${name}": ${gpuError!.message}`);
  }
  return { name, shape, dtype: storeAs, buffer };
}

/** The bytes of `tensor` in half format `to`: as stored when it is that format, else converted. */
function halfBytes({ dtype, bytes }: RawTensor, to: "bf16" | "f16"): Uint8Array<ArrayBuffer> {
  if (dtype === (to === "bf16" ? "BF16" : "F16")) return bytes;
  const values = dtype === "F32"
    ? new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4)
    : (dtype === "BF16" ? fromBf16 : fromF16)(halfWords(bytes));
  const half = to === "bf16" ? toBf16(values) : toF16(values);
  return new Uint8Array(half.buffer);
}

/** `bytes` (2-byte values) as 16-bit words, copied when they are not 2-byte aligned. */
function halfWords(bytes: Uint8Array<ArrayBuffer>): Uint16Array {
  const aligned = bytes.byteOffset % 2 === 0 ? bytes : bytes.slice();
  return new Uint16Array(aligned.buffer, aligned.byteOffset, aligned.byteLength / 2);
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
      packParams({ n: count }),
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
