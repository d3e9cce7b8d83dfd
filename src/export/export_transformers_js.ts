/**
 * Writes a policy as the model directory transformers.js generates from (`from_pretrained` /
 * `pipeline("text-generation", dir)` with `env.localModelPath`): `config.json`,
 * `onnx/model.onnx` with the KV-cached graph (weights in `onnx/model.onnx_data` past 2 GiB, which
 * `config.json`'s `transformers.js_config.use_external_data_format` announces), the tokenizer
 * files and chat template (a char tokenizer converted to `tokenizer.json`; both encoding text as
 * rft did in training, `training_tokenizer.ts`) and
 * `generation_config.json` (the model's, or config.json's bos/eos/pad ids); on request also
 * `onnx/model_fp16.onnx` with float16 weights. No quantized variants.
 */

import { basename } from "node:path";
import { CHAR_TOKENIZER_FILE, CharTokenizer } from "../model/char_tokenizer.ts";
import type { PolicyModel } from "../model/policy.ts";
import { HF_TOKENIZER_FILES } from "../model/tokenizer.ts";
import { writeAtomic } from "../util/write_atomic.ts";
import { exportOnnx, type OnnxExportResult } from "./export_onnx.ts";
import { hfCharTokenizerFiles } from "./hf_char_tokenizer.ts";
import { trainingTokenizerFiles } from "./training_tokenizer.ts";

/** The ONNX file transformers.js loads for dtype fp32, relative to the model directory. */
export const TRANSFORMERS_JS_MODEL = "onnx/model.onnx";
/** The one for dtype fp16 (float16 weights, cast to float32: inputs and outputs stay float32). */
const FP16_MODEL = "onnx/model_fp16.onnx";
const GENERATION_CONFIG = "generation_config.json";

/** Options of {@link exportTransformersJs}. */
export interface TransformersJsExportOptions {
  /** Weights in `onnx/model.onnx_data`: always, never, or (default) past 2 GiB. */
  externalData?: boolean | "auto";
  /** Also write `onnx/model_fp16.onnx` (float16 weights) for `dtype: "fp16"`. */
  fp16?: boolean;
}

/** What {@link exportTransformersJs} wrote. */
export interface TransformersJsExportResult {
  /** The fp32 model, then the fp16 one when asked for. */
  onnx: OnnxExportResult[];
  /** Every file written besides the ONNX ones, relative to the directory. */
  files: string[];
}

/** JSON text as HF writes it (2-space indent, final newline). */
function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2) + "\n";
}

/** The tokenizer and generation files of `model` by name (a char tokenizer converted). */
function sideFiles(model: PolicyModel): Map<string, Uint8Array | string> {
  const files = new Map<string, Uint8Array | string>(
    [...model.sideFiles].filter(([name]) => name !== CHAR_TOKENIZER_FILE),
  );
  if (model.tokenizer instanceof CharTokenizer) {
    const hf = hfCharTokenizerFiles(model.tokenizer);
    files.set(HF_TOKENIZER_FILES.tokenizer, jsonText(hf.tokenizer));
    files.set(HF_TOKENIZER_FILES.config, jsonText(hf.config));
  } else if (!files.has(HF_TOKENIZER_FILES.tokenizer)) {
    throw new Error(
      `Cannot export for transformers.js: expected a tokenizer (${HF_TOKENIZER_FILES.tokenizer} or ${CHAR_TOKENIZER_FILE}) with the model, found none`,
    );
  }
  if (!files.has(GENERATION_CONFIG)) {
    // rft stops on config.json's eos ids only; transformers.js then stops on the same ones.
    const { bosTokenId, eosTokenIds: eos, padTokenId } = model.config;
    files.set(
      GENERATION_CONFIG,
      jsonText({
        bos_token_id: bosTokenId,
        eos_token_id: eos.length === 1 ? eos[0] : eos.length > 0 ? eos : undefined,
        pad_token_id: padTokenId ?? model.tokenizer?.padId,
      }),
    );
  }
  return trainingTokenizerFiles(files);
}

/**
 * Writes `model` (its current GPU weights) as a transformers.js model directory `dir`
 * (created if needed; files written atomically, the ONNX model last but config.json).
 *
 * @example
 * ```ts
 * import { loadModel } from "../model/policy.ts";
 * const model = await loadModel("runs/addition/checkpoints/step_800");
 * await exportTransformersJs(model, "addition-tjs");
 * // then, in any JS runtime: await pipeline("text-generation", "addition-tjs")
 * ```
 */
export async function exportTransformersJs(
  model: PolicyModel,
  dir: string,
  options: TransformersJsExportOptions = {},
): Promise<TransformersJsExportResult> {
  const files = sideFiles(model);
  await Deno.mkdir(`${dir}/onnx`, { recursive: true });
  for (const [name, content] of files) {
    await writeAtomic(`${dir}/${name}`, typeof content === "string" ? content : [content]);
  }
  const onnx: OnnxExportResult[] = [];
  // transformers.js reads `<file>_data` (one chunk) for each file this map names.
  const external: Record<string, number> = {};
  for (const path of options.fp16 ? [TRANSFORMERS_JS_MODEL, FP16_MODEL] : [TRANSFORMERS_JS_MODEL]) {
    const file = basename(path);
    const result = await exportOnnx(model, `${dir}/${path}`, {
      kvCache: true,
      externalData: options.externalData ?? "auto",
      dataFile: `${file}_data`,
      float16Weights: path === FP16_MODEL,
    });
    if (result.dataPath) external[file] = 1;
    onnx.push(result);
  }
  const config: Record<string, unknown> = { ...model.rawConfig };
  const jsConfig = config["transformers.js_config"] as Record<string, unknown> | undefined;
  const { use_external_data_format: _, ...keep } = jsConfig ?? {};
  if (Object.keys(external).length > 0) {
    config["transformers.js_config"] = { ...keep, use_external_data_format: external };
  } else if (jsConfig) config["transformers.js_config"] = keep;
  await writeAtomic(`${dir}/config.json`, jsonText(config));
  return { onnx, files: ["config.json", ...files.keys()] };
}
