/**
 * Exports a policy as a standard ONNX model (opset 17): inputs `input_ids` (int64 [batch, seq])
 * and, by default, `attention_mask` (int64 [batch, seq], 1 = token, 0 = padding); output
 * `logits` (float [batch, seq, vocab]). Parameters are initializers under their Hugging Face
 * names, inline or, past 2 GiB (the protobuf limit) or when asked, in `<model file>.data`.
 * By default the graph is the teacher-forced forward; `kvCache` adds past keys and values in and
 * present ones out (the decoder transformers.js runs). No sampling in either.
 */

import { basename, dirname, join } from "node:path";
import { shapeSize } from "../graph/tensor.ts";
import { kvLayout, type ModelConfig } from "../model/model_config.ts";
import { parameterSpecs } from "../model/parameters.ts";
import type { PolicyModel } from "../model/policy.ts";
import { writeAtomic } from "../util/write_atomic.ts";
import { decoderLogits } from "./decoder_onnx.ts";
import { attentionContext } from "./onnx_attention.ts";
import { OnnxGraphBuilder } from "./onnx_graph_builder.ts";
import { BATCH_DIM, OnnxKvCache } from "./onnx_kv_cache.ts";
import { type EncodedOnnx, encodeOnnxModel } from "./onnx_proto.ts";

/** Weights beyond this many bytes go to external data in "auto" mode (2 GiB less headroom). */
const INLINE_WEIGHT_LIMIT = 2 ** 31 - 2 ** 26;

/** Options of {@link exportOnnx} and {@link policyOnnx}. */
export interface OnnxExportOptions {
  /** Give the model an `attention_mask` input for padded batches (default true). */
  attentionMask?: boolean;
  /** Store the weights in a data file beside the model: always, never, or (default) past 2 GiB. */
  externalData?: boolean | "auto";
  /**
   * Add a KV cache (`onnx_kv_cache.ts`): inputs `position_ids` and `past_key_values.*`, outputs
   * `present.*`, and `attention_mask` over past and new tokens (default false).
   */
  kvCache?: boolean;
  /** Store the weights as float16 (cast to float in the graph; compute stays f32). */
  float16Weights?: boolean;
}

/** What {@link exportOnnx} wrote. */
export interface OnnxExportResult {
  path: string;
  /** The external data file, when the weights went to one. */
  dataPath?: string;
  /** Bytes of the model file and of the data file (0 without one). */
  modelBytes: number;
  dataBytes: number;
  nodes: number;
  initializers: number;
}

/**
 * The ONNX encoding of a model with config `cfg` and host parameters `params` (by HF name);
 * `dataLocation` names the external data file relative to the model file (default
 * "model.onnx.data"), used only when the weights are stored externally.
 */
export function policyOnnx(
  cfg: ModelConfig,
  params: ReadonlyMap<string, Float32Array>,
  options: OnnxExportOptions & { dataLocation?: string } = {},
): EncodedOnnx & { nodes: number; initializers: number } {
  const b = new OnnxGraphBuilder();
  const specs = new Map(parameterSpecs(cfg).map((s) => [s.name, s]));
  const added = new Map<string, string>();
  const storage = options.float16Weights ? "float16" : "float";
  const weight = (name: string) => {
    const spec = specs.get(name);
    if (!spec) {
      throw new Error(
        `Cannot export ${cfg.modelType} to ONNX: expected a parameter of its config, received "${name}"`,
      );
    }
    const data = params.get(name);
    if (!data || data.length !== shapeSize(spec.shape)) {
      throw new Error(
        `Cannot export ${cfg.modelType} to ONNX: parameter "${name}" needs ${
          shapeSize(spec.shape)
        } values, received ${data?.length ?? "none"}`,
      );
    }
    if (!added.has(name)) added.set(name, b.weight(name, spec.shape, data, storage));
    return added.get(name)!;
  };
  const cached = options.kvCache === true;
  if (cached && options.attentionMask === false) {
    throw new Error(
      `Cannot export ${cfg.modelType} to ONNX with a KV cache: expected an attention_mask, received attentionMask false`,
    );
  }
  const dims = cached ? [BATCH_DIM, "sequence_length"] : ["batch", "sequence"];
  const ids = b.input("input_ids", dims, "int64");
  const maskDims = cached ? [BATCH_DIM, "total_sequence_length"] : dims;
  const mask = options.attentionMask === false
    ? undefined
    : b.input("attention_mask", maskDims, "int64");
  const positions = cached ? b.input("position_ids", dims, "int64") : undefined;
  const cache = cached ? new OnnxKvCache(b, kvLayout(cfg)) : undefined;
  const context = attentionContext(b, { ids, mask, positions, cache: cache?.extend });
  const logits = decoderLogits(b, cfg, weight, ids, context);
  b.output(logits, "logits", [...dims, cfg.vocabSize]);
  cache?.addOutputs();
  const graph = b.build(`rft ${cfg.modelType}`);
  const bytesPerValue = storage === "float16" ? 2 : 4;
  const weightBytes = [...added.keys()].reduce(
    (sum, name) => sum + bytesPerValue * params.get(name)!.length,
    0,
  );
  const mode = options.externalData ?? "auto";
  const external = mode === true || (mode === "auto" && weightBytes > INLINE_WEIGHT_LIMIT);
  if (!external && weightBytes > INLINE_WEIGHT_LIMIT) {
    throw new Error(
      `Cannot export ${cfg.modelType} to ONNX with inline weights: expected at most ${INLINE_WEIGHT_LIMIT} bytes (protobuf's 2 GiB limit), received ${weightBytes}; use external data`,
    );
  }
  const encoded = encodeOnnxModel(graph, {
    externalData: external
      ? { location: options.dataLocation ?? "model.onnx.data", include: (t) => added.has(t.name) }
      : undefined,
  });
  return { ...encoded, nodes: graph.nodes.length, initializers: graph.initializers!.length };
}

/**
 * Writes `model` (its current GPU weights, read back once) as an ONNX model at `path`, and its
 * weights to `<path>.data` (or `dataFile` beside it) when they are stored externally. Each file
 * is written atomically.
 *
 * @example
 * ```ts
 * import { loadModel } from "../model/policy.ts";
 * const model = await loadModel("path/to/hf-model-dir");
 * await exportOnnx(model, "policy.onnx");
 * ```
 */
export async function exportOnnx(
  model: PolicyModel,
  path: string,
  options: OnnxExportOptions & { dataFile?: string } = {},
): Promise<OnnxExportResult> {
  const params = await model.readParameters();
  const dataLocation = options.dataFile ?? `${basename(path)}.data`;
  const encoded = policyOnnx(model.config, params, { ...options, dataLocation });
  const size = (parts: Uint8Array[]) => parts.reduce((n, p) => n + p.length, 0);
  const dataPath = encoded.externalData.length > 0 ? join(dirname(path), dataLocation) : undefined;
  if (dataPath) await writeAtomic(dataPath, encoded.externalData);
  await writeAtomic(path, encoded.model);
  return {
    path,
    dataPath,
    modelBytes: size(encoded.model),
    dataBytes: size(encoded.externalData),
    nodes: encoded.nodes,
    initializers: encoded.initializers,
  };
}
