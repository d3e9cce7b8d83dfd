/**
 * The safetensors format: an 8-byte little-endian header length, a JSON header (`__metadata__`
 * plus `{dtype, shape, data_offsets}` per tensor), then the raw data. Reads validate the header
 * and load tensors lazily by name, from one file or from shards listed in
 * `model.safetensors.index.json`. Writes are F32 or BF16 and atomic (temp file, then rename).
 * Knows nothing of the GPU or of dtype conversion (see `upload.ts`); little-endian hosts only.
 */

import { pathExists } from "../util/path_exists.ts";
import { writeAtomic } from "../util/write_atomic.ts";
import { InputError } from "../util/input_error.ts";
import { toBf16 } from "../util/half.ts";
import { shapeSize } from "../graph/tensor.ts";

/** Bytes per element of every safetensors dtype. */
export const DTYPE_BYTES = {
  BOOL: 1,
  U8: 1,
  I8: 1,
  F8_E4M3: 1,
  F8_E5M2: 1,
  U16: 2,
  I16: 2,
  F16: 2,
  BF16: 2,
  U32: 4,
  I32: 4,
  F32: 4,
  U64: 8,
  I64: 8,
  F64: 8,
} as const;

/** A dtype name as written in safetensors headers. */
export type SafetensorsDType = keyof typeof DTYPE_BYTES;

/** Name of a checkpoint stored as one file. */
export const SINGLE_FILE = "model.safetensors";
/** Name of the index of a sharded checkpoint. */
export const INDEX_FILE = "model.safetensors.index.json";

/** Largest header rft accepts (the reference implementation's limit). */
const MAX_HEADER_BYTES = 100_000_000;

/** Where one tensor lives in its file. */
export interface TensorInfo {
  readonly name: string;
  readonly dtype: SafetensorsDType;
  readonly shape: readonly number[];
  /** Absolute byte offset of the tensor's data in the file. */
  readonly offset: number;
  readonly byteLength: number;
}

/**
 * An F32 tensor to write: its values, or a function reading them when the writer reaches the
 * tensor (e.g. from the GPU), so that a writer holds one tensor at a time.
 */
export interface F32Tensor {
  readonly name: string;
  readonly shape: readonly number[];
  /** The values, or a function making them when the writer reaches them (whole, or in pieces). */
  readonly data: Float32Array | (() => Promise<Float32Array> | AsyncIterable<Float32Array>);
}

/** A validated safetensors file whose tensors are read on demand. */
export class SafetensorsFile {
  private constructor(
    readonly path: string,
    /** The header's `__metadata__` (empty when absent). */
    readonly metadata: Readonly<Record<string, string>>,
    readonly tensors: ReadonlyMap<string, TensorInfo>,
  ) {}

  /** Reads and validates the header of `path`; tensor data stays on disk until {@link read}. */
  static async open(path: string): Promise<SafetensorsFile> {
    const file = await Deno.open(path).catch((err: Error) => {
      throw new InputError(`Cannot load ${path}: ${err.message}`);
    });
    try {
      const { size } = await file.stat();
      if (size < 8) {
        throw new InputError(
          `Cannot load ${path}: file is truncated: it has ${size} bytes, fewer than the 8-byte header length`,
        );
      }
      const prefix = await readExactly(file, path, 0, 8);
      const headerLength = new DataView(prefix.buffer).getBigUint64(0, true);
      if (headerLength > BigInt(Math.min(size - 8, MAX_HEADER_BYTES))) {
        throw new InputError(
          `Cannot load ${path}: header length ${headerLength} exceeds ${
            size - 8 > MAX_HEADER_BYTES
              ? `the ${MAX_HEADER_BYTES}-byte limit`
              : `the ${size - 8} bytes after the length prefix (file truncated or not safetensors)`
          }`,
        );
      }
      const dataStart = 8 + Number(headerLength);
      const header = await readExactly(file, path, 8, Number(headerLength));
      const { metadata, tensors } = parseHeader(path, header, dataStart, size - dataStart);
      return new SafetensorsFile(path, metadata, tensors);
    } finally {
      file.close();
    }
  }

  /** The raw little-endian bytes of tensor `name`. */
  async read(name: string): Promise<Uint8Array<ArrayBuffer>> {
    const info = this.tensors.get(name);
    if (!info) {
      throw new InputError(
        `Cannot read tensor "${name}" from ${this.path}: ${missing(this.tensors)}`,
      );
    }
    const file = await Deno.open(this.path);
    try {
      return await readExactly(file, this.path, info.offset, info.byteLength);
    } finally {
      file.close();
    }
  }
}

/** The tensors of a model directory, from `model.safetensors` or from shards and their index. */
export class Checkpoint {
  constructor(
    readonly dir: string,
    /** The file holding each tensor, by tensor name. */
    readonly fileOf: ReadonlyMap<string, SafetensorsFile>,
  ) {}

  /** Tensor names. */
  get names(): string[] {
    return [...this.fileOf.keys()];
  }

  /** Dtype, shape and location of tensor `name`. */
  info(name: string): TensorInfo {
    return this.#file(name).tensors.get(name)!;
  }

  /** The raw bytes of tensor `name`. */
  async read(name: string): Promise<Uint8Array<ArrayBuffer>> {
    return await this.#file(name).read(name);
  }

  #file(name: string): SafetensorsFile {
    const file = this.fileOf.get(name);
    if (!file) {
      throw new InputError(
        `Cannot read tensor "${name}" from ${this.dir}: ${missing(this.fileOf)}`,
      );
    }
    return file;
  }
}

/** Opens the checkpoint in `dir`: the index and its shards when present, else the single file. */
export async function openCheckpoint(dir: string): Promise<Checkpoint> {
  const indexPath = `${dir}/${INDEX_FILE}`;
  if (await pathExists(indexPath)) return openSharded(dir, indexPath);
  const singlePath = `${dir}/${SINGLE_FILE}`;
  if (!(await pathExists(singlePath))) {
    throw new InputError(
      `Cannot open checkpoint ${dir}: found neither ${SINGLE_FILE} nor ${INDEX_FILE}`,
    );
  }
  const file = await SafetensorsFile.open(singlePath);
  return new Checkpoint(dir, new Map([...file.tensors.keys()].map((name) => [name, file])));
}

async function openSharded(dir: string, indexPath: string): Promise<Checkpoint> {
  const fail = (detail: string): never => {
    throw new InputError(`Cannot load ${indexPath}: ${detail}`);
  };
  let index: unknown;
  try {
    index = JSON.parse(await Deno.readTextFile(indexPath));
  } catch (err) {
    fail(`not valid JSON: ${(err as Error).message}`);
  }
  const weightMap = (index as { weight_map?: unknown })?.weight_map;
  if (!isRecord(weightMap)) fail(`"weight_map" is missing or not an object`);
  const shards = new Map<string, SafetensorsFile>();
  const files = new Map<string, SafetensorsFile>();
  for (const [name, shard] of Object.entries(weightMap as Record<string, unknown>)) {
    if (typeof shard !== "string" || !/^[^/\\]+$/.test(shard) || shard === "..") {
      fail(`"weight_map" entry "${name}" is ${JSON.stringify(shard)}; expected a file name`);
    }
    const shardName = shard as string;
    let file = shards.get(shardName);
    if (!file) {
      const path = `${dir}/${shardName}`;
      if (!(await pathExists(path))) fail(`shard "${shardName}" (holding "${name}") is missing`);
      file = await SafetensorsFile.open(path);
      shards.set(shardName, file);
    }
    if (!file.tensors.has(name)) fail(`shard "${shardName}" has no tensor "${name}"`);
    files.set(name, file);
  }
  return new Checkpoint(dir, files);
}

/** Dtypes rft writes: f32 values as they are, or rounded to bfloat16 (as the Hub ships models). */
export type WrittenDType = "F32" | "BF16";

/** `t`'s data as the bytes of `dtype`; `path` names the file in the error. */
async function* tensorBytes(
  path: string,
  t: F32Tensor,
  dtype: WrittenDType,
): AsyncGenerator<Uint8Array> {
  const size = shapeSize(t.shape);
  const given = t.data; // once: a getter makes it
  const made = typeof given === "function" ? given() : given;
  const pieces = Symbol.asyncIterator in made ? made : [await made];
  let count = 0;
  for await (const values of pieces) {
    count += values.length;
    if (count > size) break;
    const data = dtype === "BF16" ? toBf16(values) : values;
    yield new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  }
  if (count !== size) {
    throw new Error(
      `Cannot write ${path}: tensor "${t.name}" has ${
        count > size ? `more than ${size}` : count
      } values; shape [${t.shape}] needs ${size}`,
    );
  }
}

/**
 * Writes `tensors` as one safetensors file of `dtype` (default F32) at `path`, atomically. Each
 * tensor's `data` is read once, when it is written (a function or getter may make it then), so
 * the tensors need not all be in memory at once.
 */
export async function writeSafetensors(
  path: string,
  tensors: readonly F32Tensor[],
  dtype: WrittenDType = "F32",
): Promise<void> {
  const header: Record<string, unknown> = { __metadata__: { format: "pt" } };
  let end = 0;
  for (const t of tensors) {
    if (Object.hasOwn(header, t.name)) {
      throw new Error(`Cannot write ${path}: tensor name "${t.name}" is used twice or reserved`);
    }
    const bytes = shapeSize(t.shape) * DTYPE_BYTES[dtype];
    header[t.name] = { dtype, shape: t.shape, data_offsets: [end, end + bytes] };
    end += bytes;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const padding = new TextEncoder().encode(" ".repeat((8 - (json.length % 8)) % 8));
  const prefix = new Uint8Array(8);
  new DataView(prefix.buffer).setBigUint64(0, BigInt(json.length + padding.length), true);
  await writeAtomic(
    path,
    (async function* () {
      yield* [prefix, json, padding];
      for (const t of tensors) yield* tensorBytes(path, t, dtype);
    })(),
  );
}

/** Options of {@link writeCheckpoint}. */
export interface WriteCheckpointOptions {
  /** Split into shards of at most this many data bytes (a bigger tensor gets a shard alone). */
  maxShardBytes?: number;
  /** The dtype of the written tensors; default F32. */
  dtype?: WrittenDType;
}

/**
 * Writes `tensors` into `dir` as `model.safetensors`, or, when they exceed `maxShardBytes`, as
 * `model-0000i-of-0000n.safetensors` shards plus `model.safetensors.index.json`. Removes the
 * other layout's entry file so a stale one is never read. Returns the file names written.
 */
export async function writeCheckpoint(
  dir: string,
  tensors: readonly F32Tensor[],
  { maxShardBytes = Infinity, dtype = "F32" }: WriteCheckpointOptions = {},
): Promise<string[]> {
  const shards: F32Tensor[][] = [[]];
  let shardBytes = 0;
  for (const t of tensors) {
    const bytes = shapeSize(t.shape) * DTYPE_BYTES[dtype];
    if (shardBytes > 0 && shardBytes + bytes > maxShardBytes) {
      shards.push([]);
      shardBytes = 0;
    }
    shards[shards.length - 1].push(t);
    shardBytes += bytes;
  }
  if (shards.length === 1) {
    await writeSafetensors(`${dir}/${SINGLE_FILE}`, tensors, dtype);
    await removeIfPresent(`${dir}/${INDEX_FILE}`);
    return [SINGLE_FILE];
  }
  const pad = (i: number) => String(i).padStart(5, "0");
  const names = shards.map((_, i) => `model-${pad(i + 1)}-of-${pad(shards.length)}.safetensors`);
  const weightMap: Record<string, string> = {};
  for (const [i, shard] of shards.entries()) {
    await writeSafetensors(`${dir}/${names[i]}`, shard, dtype);
    for (const t of shard) weightMap[t.name] = names[i];
  }
  const index = {
    metadata: {
      total_size: tensors.reduce((sum, t) => sum + shapeSize(t.shape) * DTYPE_BYTES[dtype], 0),
    },
    weight_map: Object.fromEntries(Object.entries(weightMap).sort(([a], [b]) => a < b ? -1 : 1)),
  };
  await writeAtomic(`${dir}/${INDEX_FILE}`, [
    new TextEncoder().encode(JSON.stringify(index, null, 2) + "\n"),
  ]);
  await removeIfPresent(`${dir}/${SINGLE_FILE}`);
  return [...names, INDEX_FILE];
}

/** Validates a header: known dtypes, sizes that match shapes, offsets inside the data, no overlaps. */
function parseHeader(path: string, bytes: Uint8Array, dataStart: number, dataLength: number) {
  const fail = (detail: string): never => {
    throw new InputError(`Cannot load ${path}: ${detail}`);
  };
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (err) {
    fail(`header is not valid JSON: ${(err as Error).message}`);
  }
  if (!isRecord(header)) return fail("header is not a JSON object");
  let metadata: Record<string, string> = {};
  const tensors: TensorInfo[] = [];
  for (const [name, entry] of Object.entries(header)) {
    if (name === "__metadata__") {
      if (!isRecord(entry) || Object.values(entry).some((v) => typeof v !== "string")) {
        fail(`"__metadata__" is ${JSON.stringify(entry)}; expected an object of strings`);
      }
      metadata = entry as Record<string, string>;
      continue;
    }
    const e = isRecord(entry) ? entry : fail(`tensor "${name}" is not an object`);
    const dtype = e.dtype as SafetensorsDType;
    if (typeof dtype !== "string" || !Object.hasOwn(DTYPE_BYTES, dtype)) {
      fail(
        `tensor "${name}" has dtype ${JSON.stringify(dtype)}; expected one of ${
          Object.keys(DTYPE_BYTES).join(", ")
        }`,
      );
    }
    const shape = e.shape as number[];
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      fail(`tensor "${name}" has shape ${JSON.stringify(shape)}; expected non-negative integers`);
    }
    const offsets = e.data_offsets as [number, number];
    if (
      !Array.isArray(offsets) || offsets.length !== 2 ||
      !offsets.every((o) => Number.isSafeInteger(o) && o >= 0) || offsets[0] > offsets[1]
    ) {
      fail(`tensor "${name}" has data_offsets ${JSON.stringify(offsets)}; expected [begin, end]`);
    }
    const [begin, end] = offsets;
    const expected = shape.reduce((a, b) => a * b, 1) * DTYPE_BYTES[dtype];
    if (end - begin !== expected) {
      fail(
        `tensor "${name}" spans ${end - begin} bytes; ${dtype} shape [${shape}] needs ${expected}`,
      );
    }
    if (end > dataLength) {
      fail(
        `file is truncated: tensor "${name}" ends at data byte ${end} but the file has ${dataLength} data bytes`,
      );
    }
    tensors.push({ name, dtype, shape, offset: dataStart + begin, byteLength: end - begin });
  }
  tensors.sort((a, b) => a.offset - b.offset);
  for (let i = 1; i < tensors.length; i++) {
    const [a, b] = [tensors[i - 1], tensors[i]];
    if (a.offset + a.byteLength > b.offset) {
      fail(`tensors "${a.name}" and "${b.name}" overlap`);
    }
  }
  return { metadata, tensors: new Map(tensors.map((t) => [t.name, t])) };
}

async function readExactly(
  file: Deno.FsFile,
  path: string,
  offset: number,
  length: number,
): Promise<Uint8Array<ArrayBuffer>> {
  const bytes = new Uint8Array(length);
  await file.seek(offset, Deno.SeekMode.Start);
  for (let done = 0; done < length;) {
    const n = await file.read(bytes.subarray(done));
    if (n === null) {
      throw new InputError(
        `Cannot read ${path}: file is truncated: expected ${length} bytes at offset ${offset}, found ${done}`,
      );
    }
    done += n;
  }
  return bytes;
}

async function removeIfPresent(path: string): Promise<void> {
  await Deno.remove(path).catch((err) => {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** "no such tensor" with a few names that do exist. */
function missing(names: ReadonlyMap<string, unknown>): string {
  const some = [...names.keys()].slice(0, 3).map((n) => `"${n}"`).join(", ");
  return `no such tensor (it has ${names.size}${names.size ? `, e.g. ${some}` : ""})`;
}
