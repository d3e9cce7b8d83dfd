/**
 * A policy model on the GPU: its HF config, its parameters as GPU variables, its tokenizer, and
 * the teacher-forced `logprobs` every RL algorithm needs. Loads and saves Hugging Face model
 * directories (config.json + safetensors with HF names and shapes). Generation lives in
 * `src/engine/`; training graphs are built by the trainer from `scoredHidden` and `tokenScores`.
 */

import type { LruCache } from "../util/lru_cache.ts";
import { Mutex } from "../util/mutex.ts";
import { writeAtomic } from "../util/write_atomic.ts";
import { bucketStart, columnsFrom, padBatch, paddedLength } from "./padded_batch.ts";
import {
  type EngineStats,
  type GeneratedSample,
  type GenerateOptions,
  GenerationEngine,
} from "../engine/engine.ts";
import { getGpu, type GpuContext } from "../gpu/device.ts";
import { readVariablePieces, readVariables } from "../graph/read_variables.ts";
import { compileGraph, type Executable } from "../graph/executable.ts";
import { Graph } from "../graph/graph.ts";
import { graphCache } from "../graph/graph_cache.ts";
import type { Tensor, Variable } from "../graph/tensor.ts";
import { formatShape, sameShape, shapeSize } from "../graph/tensor.ts";
import { type ModelConfig, parseHfConfig } from "./hf_config.ts";
import { checkpointNames, type ParameterSpec, parameterSpecs } from "./parameters.ts";
import {
  type Checkpoint,
  openCheckpoint,
  type SafetensorsDType,
  writeCheckpoint,
} from "./safetensors.ts";
import { HF_TOKENIZER_FILES, loadTokenizer, type Tokenizer } from "./tokenizer.ts";
import { CHAR_TOKENIZER_FILE, CharTokenizer } from "./char_tokenizer.ts";
import { loadVariable, type RawTensor, type UploadOptions, uploadTensor } from "./upload.ts";
import { mergeShards, shardName, shardRows } from "./row_shards.ts";
import { tokenNec, tokenScores } from "./token_scores.ts";
import {
  inferenceBuild,
  type RowShard,
  scoredHidden,
  type TokenInputs,
  type WeightLookup,
} from "./transformer.ts";
import { InputError } from "../util/input_error.ts";
import { ADAPTER_CONFIG_FILE, loadLoraAdapter, type LoraAdapter, saveLoraAdapter } from "./lora.ts";
import { LoraMerge } from "./lora_merge.ts";

/** Files kept from a loaded directory and written by `save` (tokenizer, generation settings). */
const SIDE_FILES = [
  ...Object.values(HF_TOKENIZER_FILES),
  CHAR_TOKENIZER_FILE,
  "special_tokens_map.json",
  "generation_config.json",
];

/**
 * What a teacher-forced pass reads at each position (`positionStats`): the log-prob of the next
 * token, the entropy of the next-token distribution, and `nec`, `sum p^2 log p + H sum p^2`
 * (the entropy-change signal of Clip_V).
 */
export type PositionStat = "logprob" | "entropy" | "nec";

/** Options of {@link PolicyModel.logprobs}. */
export interface LogprobOptions {
  /** Logits are divided by this before the log-softmax (as the sampler does); default 1. */
  temperature?: number;
  /**
   * The first index the caller reads: log-probs before it may be left uncomputed (NaN), which
   * skips the LM head there (prompt positions). Default 0.
   */
  from?: number;
}

/** A generated sample with its text (when the model has a tokenizer). */
export interface GenerationResult extends GeneratedSample {
  /** Decoded tokens, without a final stop token ("" without a tokenizer). */
  text: string;
}

/** Log-prob graphs a model keeps (one per batch shape and temperature): the 2 most recent. */
const LOGPROB_GRAPHS = 2;

/** A language model whose parameters live on the GPU. */
export class PolicyModel {
  #engine?: GenerationEngine;
  #lora?: LoraAdapter;
  /** False for a {@link baseModel} view, which must not free the weights it shares. */
  #ownsParams = true;
  /** Serializes GPU work on this model: compiled graphs share their input/output buffers. */
  readonly gpuLock: Mutex = new Mutex();
  readonly #graphs: LruCache<
    { exe: Executable; inputs: TokenInputs & { targets: Tensor }; outs: Tensor[] }
  >;

  constructor(
    readonly gpu: GpuContext,
    /** config.json as read (written back unchanged on save). */
    readonly rawConfig: Record<string, unknown>,
    readonly config: ModelConfig,
    /**
     * Parameters by HF name; a weight too large for one storage binding is stored as row
     * shards named `<HF name>#<k>` (`row_shards.ts`).
     */
    readonly params: ReadonlyMap<string, Variable>,
    readonly tokenizer?: Tokenizer,
    /**
     * Tokenizer and generation files of the directory the model was loaded from, by file name,
     * kept in memory so `save` writes them even after that directory is gone.
     */
    readonly sideFiles: ReadonlyMap<string, Uint8Array<ArrayBuffer>> = new Map(),
  ) {
    this.#graphs = graphCache(gpu, LOGPROB_GRAPHS);
  }

  /** A parameter lookup binding each variable (or each row shard of one) into graph `g`. */
  weights(g: Graph): WeightLookup {
    const lookup: WeightLookup = (name) => {
      const v = this.params.get(name);
      if (!v) throw new Error(`Model has no parameter "${name}"`);
      return g.variable(v);
    };
    lookup.lora = (module) => {
      const adapter = this.#lora?.of(module);
      return adapter && {
        a: g.variable(adapter.a),
        b: g.variable(adapter.b),
        scale: this.#lora!.scale,
      };
    };
    lookup.shards = (name) => {
      const shards = this.#shards(name);
      if (!shards) return undefined;
      let first = 0;
      return shards.map((v): RowShard => {
        first += v.shape[0];
        return { weight: g.variable(v), first: first - v.shape[0] };
      });
    };
    return lookup;
  }

  /**
   * The most tokens of one graph whose widest activation [tokens, width] (f32: the MLP's
   * intermediate, the attention's projections) fits one storage binding of the device; the
   * logits are never whole (`token_scores.ts`), so they do not bound it.
   */
  get activationTokens(): number {
    const bindingBytes = this.gpu.device.limits.maxStorageBufferBindingSize;
    const widest = Math.max(this.config.intermediateSize, 3 * this.config.hiddenSize);
    return Math.max(1, Math.floor(bindingBytes / (4 * widest)));
  }

  /** Every parameter variable (each row shard of a sharded weight), in `parameterSpecs` order. */
  variables(): Variable[] {
    return parameterSpecs(this.config).flatMap((spec) =>
      this.#shards(spec.name) ?? [this.params.get(spec.name)!]
    );
  }

  /** The LoRA adapter trained on this model's frozen weights, if one is attached. */
  get lora(): LoraAdapter | undefined {
    return this.#lora;
  }

  /**
   * Attaches `adapter` (which the model then owns): every graph built from now on adds its
   * update, and training moves only its variables. Call before building graphs.
   */
  attachLora(adapter: LoraAdapter): void {
    if (this.#lora) throw new Error("Cannot attach a LoRA adapter: the model has one already");
    if (this.#graphs.size || this.#engine) {
      throw new Error("Cannot attach a LoRA adapter after the model has built graphs");
    }
    this.#lora = adapter;
  }

  /**
   * This model's frozen base weights without its LoRA adapter, as a model of its own that shares
   * their buffers (PEFT's "adapter disabled"): with an adapter, the base never changes, so this
   * is the frozen reference model at no cost in weights. Destroying it frees only its own graphs.
   */
  baseModel(): PolicyModel {
    if (!this.#lora) throw new Error("Cannot take the base of a model without a LoRA adapter");
    const base = new PolicyModel(
      this.gpu,
      this.rawConfig,
      this.config,
      this.params,
      this.tokenizer,
      this.sideFiles,
    );
    base.#ownsParams = false;
    return base;
  }

  /** The variables training updates: the adapter's when one is attached, else every one. */
  trainableVariables(): Variable[] {
    return this.#lora?.variables() ?? this.variables();
  }

  /**
   * Writes the adapter merged into its base weights (`W + (alpha/r) B A`, on the GPU) into the
   * variables of the same names in `targets` (another model's, or this model's own); only the
   * adapted weights are written, the others being frozen. The caller holds `gpuLock`.
   */
  async mergeLoraInto(targets: ReadonlyMap<string, Variable>): Promise<void> {
    if (!this.#lora) throw new Error("Cannot merge a LoRA adapter: the model has none");
    const merge = await LoraMerge.compile(this.gpu, this.params, this.#lora, targets);
    try {
      await merge.run();
      await this.gpu.device.queue.onSubmittedWorkDone();
    } finally {
      merge.destroy();
    }
  }

  /**
   * Merges the attached adapter into this model's own weights and drops it, so the model is
   * the adapted one at the base model's cost. Call before building graphs.
   */
  async mergeLora(): Promise<void> {
    await this.mergeLoraInto(this.params);
    this.#lora!.destroy();
    this.#lora = undefined;
  }

  /** The row shards of weight `name` in row order; undefined when it is stored whole. */
  #shards(name: string): Variable[] | undefined {
    if (this.params.has(name)) return undefined;
    const shards: Variable[] = [];
    for (let k = 0; this.params.has(shardName(name, k)); k++) {
      shards.push(this.params.get(shardName(name, k))!);
    }
    return shards.length ? shards : undefined;
  }

  /**
   * Log-probability of each token given the ones before it, for every sequence:
   * result[i][t] = log p(seq[t + 1] | seq[0..t]), so each list is one shorter than its sequence.
   * The sequences run as one padded batch with one readback, or in several when the batch's
   * logits would not fit one storage binding of the device.
   */
  logprobs(
    sequences: readonly (readonly number[])[],
    options: LogprobOptions = {},
  ): Promise<number[][]> {
    return this.gpuLock.run(async () =>
      (await this.#positions(sequences, options, ["logprob"]))[0]
    );
  }

  /**
   * `stats` at each position of every sequence (as {@link logprobs}: one shorter than its
   * sequence, NaN before `from`): `result[k][i][t]` is `stats[k]` of sequence i at position t.
   */
  positionStats(
    sequences: readonly (readonly number[])[],
    stats: readonly PositionStat[],
    options: LogprobOptions = {},
  ): Promise<number[][][]> {
    return this.gpuLock.run(() => this.#positions(sequences, options, stats));
  }

  async #positions(
    sequences: readonly (readonly number[])[],
    options: LogprobOptions,
    stats: readonly PositionStat[],
  ): Promise<number[][][]> {
    const temperature = options.temperature ?? 1;
    if (!(temperature > 0)) {
      throw new Error(`Cannot compute logprobs: temperature must be > 0, received ${temperature}`);
    }
    if (sequences.length === 0) return stats.map(() => []);
    const vocab = this.config.vocabSize;
    for (const [i, seq] of sequences.entries()) {
      const bad = seq.findIndex((id) => !Number.isInteger(id) || id < 0 || id >= vocab);
      if (seq.length < 2 || bad >= 0) {
        throw new Error(
          `Cannot compute logprobs of sequence ${i}: ${
            seq.length < 2
              ? "it needs at least 2 tokens"
              : `token ${bad} is ${seq[bad]}, outside [0, ${vocab})`
          }`,
        );
      }
    }
    const seq = paddedLength(Math.max(...sequences.map((s) => s.length)));
    // Columns before `from` (whole buckets, so calls share graphs) are not computed.
    const from = Math.min(bucketStart(options.from ?? 0), seq - 1);
    const kept = seq - from;
    // Rows per graph run, so every activation [rows, seq, width] fits one storage binding.
    const rows = Math.max(1, Math.min(sequences.length, Math.floor(this.activationTokens / seq)));
    const result: number[][][] = stats.map(() => []);
    for (let first = 0; first < sequences.length; first += rows) {
      const chunk = sequences.slice(first, first + rows);
      const key = { batch: chunk.length, seq, temperature, from, stats };
      const { exe, inputs, outs } = await this.#positionGraph(key);
      const { ids, positions, segments, targets } = padBatch(chunk, seq, vocab);
      await exe.run(
        new Map([
          [inputs.ids, ids],
          [inputs.positions, positions],
          [inputs.segments, segments],
          [inputs.targets, columnsFrom(targets, seq, from)],
        ]),
      );
      const read = await exe.read(outs);
      read.forEach((values, k) => {
        for (const [b, s] of chunk.entries()) {
          const computed = values.subarray(b * kept, b * kept + Math.max(0, s.length - 1 - from));
          const skipped = new Array<number>(Math.min(from, s.length - 1)).fill(NaN);
          result[k].push([...skipped, ...computed]);
        }
      });
    }
    return result;
  }

  #positionGraph(
    { batch, seq, temperature, from, stats }: {
      batch: number;
      seq: number;
      temperature: number;
      from: number;
      stats: readonly PositionStat[];
    },
  ) {
    const name = stats.join("+") === "logprob" ? "logprobs" : stats.join("+");
    const key = `${name}:${batch}x${seq}@${temperature}>${from}`;
    return this.#graphs.getOrCreate(key, async () => {
      const g = new Graph();
      const input = (name: string, width = seq) => g.input([batch, width], "i32", name);
      const inputs = {
        ids: input("ids"),
        positions: input("positions"),
        segments: input("segments"),
        targets: input("targets", seq - from),
      };
      const w = this.weights(g);
      const hidden = scoredHidden(
        this.config,
        w,
        inputs,
        from,
        inferenceBuild(this.gpu, batch * seq),
      );
      const scores = stats.some((s) => s !== "nec")
        ? tokenScores(this.config, w, hidden, inputs.targets, { temperature })
        : undefined;
      const outs = stats.map((stat) =>
        stat === "logprob"
          ? scores!.logp
          : stat === "entropy"
          ? scores!.entropy
          : tokenNec(this.config, w, hidden, { temperature })
      );
      return { exe: await compileGraph(this.gpu, outs, key), inputs, outs };
    });
  }

  /**
   * Samples continuations of `prompts` (text, encoded with the tokenizer, or token ids) with
   * KV-cached generation on the GPU; `n` samples per prompt share one prefill.
   */
  async generate(
    prompts: readonly (string | readonly number[])[],
    options: GenerateOptions = {},
  ): Promise<GenerationResult[]> {
    const ids = prompts.map((p, i) => {
      if (typeof p !== "string") return p;
      if (!this.tokenizer) {
        throw new Error(
          `Cannot generate from prompt ${i}: the model has no tokenizer; pass token ids`,
        );
      }
      return this.tokenizer.encode(p);
    });
    const engine = this.#engine ??= new GenerationEngine(this);
    const samples = await this.gpuLock.run(() => engine.generate(ids, options));
    return samples.map((s) => ({
      ...s,
      text: this.tokenizer
        ? this.tokenizer.decode(s.finishReason === "stop" ? s.tokens.slice(0, -1) : s.tokens)
        : "",
    }));
  }

  /** The generation engine's counters (readbacks, decode steps, tokens). */
  get generationStats(): EngineStats | undefined {
    return this.#engine?.stats;
  }

  /** Reads every parameter back to the host (one readback), by HF name (shards merged). */
  async readParameters(): Promise<Map<string, Float32Array<ArrayBuffer>>> {
    return mergeShards(await readVariables(this.gpu.device, this.params.values()));
  }

  /** Reads the attached adapter's A and B back to the host (one readback), by PEFT name. */
  async readLoraParameters(): Promise<Map<string, Float32Array<ArrayBuffer>>> {
    if (!this.#lora) throw new Error("Cannot read LoRA parameters: the model has no adapter");
    return await readVariables(this.gpu.device, this.#lora.params.values());
  }

  /**
   * Writes a Hugging Face model directory: config.json as loaded, the parameters as F32
   * safetensors with HF names and shapes (read back one at a time), and the tokenizer files of
   * the source directory; with an adapter attached, also the PEFT adapter files (`lora.ts`)
   * beside the base.
   */
  async save(dir: string): Promise<void> {
    await Deno.mkdir(dir, { recursive: true });
    // Read back piece by piece as the writer reaches it (a sharded weight's row shards in turn):
    // no host copy of the model, nor of its largest weight.
    const tensors = parameterSpecs(this.config).map((spec) => ({
      name: spec.name,
      shape: spec.shape,
      data: () =>
        readVariablePieces(
          this.gpu.device,
          this.#shards(spec.name) ?? [this.params.get(spec.name)!],
        ),
    }));
    await writeCheckpoint(dir, tensors, { maxShardBytes: 2 ** 31 });
    await writeAtomic(`${dir}/config.json`, JSON.stringify(this.rawConfig, null, 2) + "\n");
    for (const [file, bytes] of this.sideFiles) await writeAtomic(`${dir}/${file}`, [bytes]);
    if (!this.sideFiles.has(CHAR_TOKENIZER_FILE) && this.tokenizer instanceof CharTokenizer) {
      await this.tokenizer.save(`${dir}/${CHAR_TOKENIZER_FILE}`);
    }
    if (this.#lora) await saveLoraAdapter(dir, this.#lora, await this.readLoraParameters());
  }

  /** Frees the compiled graphs and the parameters' GPU buffers. */
  destroy(): void {
    this.#engine?.destroy();
    this.#graphs.clear();
    this.#lora?.destroy();
    if (this.#ownsParams) { for (const v of this.params.values()) v.buffer.destroy(); }
  }

  /** {@link destroy}, for `using`. */
  [Symbol.dispose](): void {
    this.destroy();
  }
}

/** Options of {@link loadModel} and {@link createModel}. */
export interface LoadOptions {
  gpu?: GpuContext;
  /**
   * Shard weights as if one storage binding held this many bytes; default (and at most): the
   * device's `maxStorageBufferBindingSize` (tests lower it to exercise sharding).
   */
  maxBindingBytes?: number;
  /**
   * A PEFT adapter directory to apply; default: the model directory itself when it holds an
   * `adapter_config.json` (a LoRA checkpoint).
   */
  adapterDir?: string;
  /**
   * What to do with that adapter: `merge` it into the weights (default: generation, serving,
   * export) or `attach` it to train on (resuming a LoRA run).
   */
  adapter?: "merge" | "attach";
  /**
   * The weights are never trained or merged into (a KL reference, a LoRA base): matrices the
   * checkpoint stores as BF16 or F16 stay so on the GPU (exact; half the bytes of f32), read by
   * the kernels with f32 arithmetic.
   */
  frozen?: boolean;
}

/**
 * Loads a Hugging Face model directory (config.json, model.safetensors or a sharded index, and
 * the tokenizer when present). Every parameter the architecture needs must be there with its HF
 * shape; F16 and BF16 tensors are widened to f32 on the GPU. A PEFT adapter (in `dir` or
 * `options.adapterDir`) is merged or attached as `options.adapter` says.
 */
export async function loadModel(dir: string, options: LoadOptions = {}): Promise<PolicyModel> {
  const gpu = options.gpu ?? await getGpu();
  const configPath = `${dir}/config.json`;
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(await Deno.readTextFile(configPath));
  } catch (err) {
    throw new InputError(`Cannot load model from ${dir}: ${configPath}: ${(err as Error).message}`);
  }
  const config = parseHfConfig(raw, configPath);
  const limit = bindingLimit(gpu, options);
  checkBindable(config, limit, `Cannot load model from ${dir}`);
  const checkpoint = await openCheckpoint(dir);
  const available = new Set(checkpoint.names);
  const adapterDir = options.adapterDir ??
    (await exists(`${dir}/${ADAPTER_CONFIG_FILE}`) ? dir : undefined);
  // An adapter merged into the weights needs them in f32.
  const frozen = options.frozen && (adapterDir === undefined || options.adapter === "attach");
  const params = new Map<string, Variable>();
  try {
    for (const spec of parameterSpecs(config)) {
      const stored = checkpointNames(spec.name).find((n) => available.has(n));
      if (!stored) {
        throw new InputError(
          `Cannot load model from ${dir}: tensor "${spec.name}" is missing from the checkpoint`,
        );
      }
      const info = checkpoint.info(stored);
      if (!sameShape(info.shape, spec.shape)) {
        throw new InputError(
          `Cannot load model from ${dir}: tensor "${stored}" has shape ${
            formatShape(info.shape)
          }; config.json implies ${formatShape(spec.shape)}`,
        );
      }
      for (const v of await loadParameter(gpu, checkpoint, spec, stored, limit, frozen)) {
        params.set(v.name, v);
      }
    }
  } catch (err) {
    for (const v of params.values()) v.buffer.destroy();
    throw err;
  }
  const hasTokenizer = await exists(`${dir}/${HF_TOKENIZER_FILES.tokenizer}`) ||
    await exists(`${dir}/${CHAR_TOKENIZER_FILE}`);
  const tokenizer = hasTokenizer ? await loadTokenizer(dir) : undefined;
  const model = new PolicyModel(gpu, raw, config, params, tokenizer, await readSideFiles(dir));
  if (adapterDir !== undefined) {
    try {
      model.attachLora(await loadLoraAdapter(gpu, config, adapterDir));
      if (options.adapter !== "attach") await model.mergeLora();
    } catch (err) {
      model.destroy();
      throw err;
    }
  }
  return model;
}

/**
 * A model from config.json contents and host parameters (e.g. `initParameters`), on the GPU;
 * `sideFilesFrom`: a directory whose tokenizer and generation files it keeps (and saves).
 */
export async function createModel(
  rawConfig: Record<string, unknown>,
  parameters: ReadonlyMap<string, Float32Array<ArrayBuffer>>,
  options: LoadOptions & { tokenizer?: Tokenizer; sideFilesFrom?: string } = {},
): Promise<PolicyModel> {
  const gpu = options.gpu ?? await getGpu();
  const config = parseHfConfig(rawConfig, "config");
  const limit = bindingLimit(gpu, options);
  checkBindable(config, limit, "Cannot create model");
  const params = new Map<string, Variable>();
  for (const spec of parameterSpecs(config)) {
    const data = parameters.get(spec.name);
    if (!data || data.length !== shapeSize(spec.shape)) {
      throw new Error(
        `Cannot create model: parameter "${spec.name}" needs ${
          shapeSize(spec.shape)
        } values, received ${data?.length ?? "none"}`,
      );
    }
    const tensor = {
      name: spec.name,
      dtype: "F32" as const,
      shape: spec.shape,
      bytes: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
    };
    const rows = shardRows(spec, limit);
    const uploaded = rows
      ? await uploadRowShards(gpu, tensor, rows)
      : [await uploadTensor(gpu, tensor)];
    for (const v of uploaded) params.set(v.name, v);
  }
  const sideFiles = options.sideFilesFrom === undefined
    ? new Map()
    : await readSideFiles(options.sideFilesFrom);
  return new PolicyModel(gpu, rawConfig, config, params, options.tokenizer, sideFiles);
}

/**
 * The variables of parameter `spec` (stored as `stored` in `checkpoint`): the tensor whole, or its
 * row shards when it exceeds a binding of `limit` bytes. With `frozen`, a matrix stored as BF16
 * or F16 stays in that format (exact, half the bytes); everything else becomes f32.
 */
async function loadParameter(
  gpu: GpuContext,
  checkpoint: Checkpoint,
  spec: ParameterSpec,
  stored: string,
  limit: number,
  frozen = false,
): Promise<Variable[]> {
  const info = checkpoint.info(stored);
  const half = HALF_OF[info.dtype];
  const storeAs = frozen && half && spec.shape.length === 2 ? half : "f32";
  const rows = shardRows(spec, limit);
  if (!rows) {
    const v = await loadVariable(gpu, checkpoint, stored, { storeAs });
    return [{ ...v, name: spec.name }];
  }
  const tensor = { name: spec.name, dtype: info.dtype, shape: spec.shape };
  return await uploadRowShards(gpu, { ...tensor, bytes: await checkpoint.read(stored) }, rows, {
    storeAs,
  });
}

/** The half-precision variable dtype of a checkpoint's 16-bit float dtypes. */
const HALF_OF: Partial<Record<SafetensorsDType, "bf16" | "f16">> = { BF16: "bf16", F16: "f16" };

/** Uploads `tensor` [rows, cols] as row shards of `rows` rows each, named by `shardName`. */
async function uploadRowShards(
  gpu: GpuContext,
  tensor: RawTensor,
  rows: readonly number[],
  options: UploadOptions = {},
): Promise<Variable[]> {
  const rowBytes = tensor.bytes.byteLength / tensor.shape[0];
  const shards: Variable[] = [];
  let first = 0;
  for (const [k, count] of rows.entries()) {
    shards.push(
      await uploadTensor(gpu, {
        name: shardName(tensor.name, k),
        dtype: tensor.dtype,
        shape: [count, ...tensor.shape.slice(1)],
        bytes: tensor.bytes.subarray(first * rowBytes, (first + count) * rowBytes),
      }, options),
    );
    first += count;
  }
  return shards;
}

/** The storage-binding size weights are sharded to: the device's, or the test's lower one. */
function bindingLimit(gpu: GpuContext, options: LoadOptions): number {
  const device = gpu.device.limits.maxStorageBufferBindingSize;
  return Math.min(device, options.maxBindingBytes ?? device);
}

/**
 * Throws naming the first parameter of `config` too large for one storage binding of `limit`
 * bytes that cannot be sharded (only the vocabulary-sized weights can).
 */
function checkBindable(config: ModelConfig, limit: number, where: string): void {
  const big = parameterSpecs(config).find((spec) =>
    shapeSize(spec.shape) * 4 > limit && !shardRows(spec, limit)
  );
  if (!big) return;
  throw new InputError(
    `${where}: tensor "${big.name}" ${formatShape(big.shape)} needs ${
      shapeSize(big.shape) * 4
    } bytes as f32, above this adapter's maxStorageBufferBindingSize of ${limit}; rft splits ` +
      "only the token embedding and LM head over several bindings, so this model does not fit " +
      "this adapter",
  );
}

/** The side files present in `dir`, by name. */
async function readSideFiles(dir: string): Promise<Map<string, Uint8Array<ArrayBuffer>>> {
  const files = new Map<string, Uint8Array<ArrayBuffer>>();
  for (const file of SIDE_FILES) {
    try {
      files.set(file, await Deno.readFile(`${dir}/${file}`));
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
  return files;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}
