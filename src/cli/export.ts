/**
 * `rft export --onnx OUT.onnx --model DIR` writes a model as a standard ONNX graph (see
 * `src/export/export_onnx.ts`); `rft export --transformers-js OUT_DIR --model DIR` writes the
 * model directory transformers.js generates from, KV cache and tokenizer included (see
 * `src/export/export_transformers_js.ts`). DIR is a Hugging Face model directory, a checkpoint
 * directory, or a run directory (its latest checkpoint; of a multi-stage run, its last stage's).
 */

import { exportOnnx, type OnnxExportResult } from "../export/export_onnx.ts";
import { exportTransformersJs } from "../export/export_transformers_js.ts";
import { beginActivity } from "../util/activity.ts";
import { CliError } from "./cli_error.ts";
import { loadCliModel } from "./model_directory.ts";
import { checkOutputDirectory, checkOutputFile } from "./output_path.ts";
import { parseFlags } from "./parse_flags.ts";

/** `--help` of `rft export`. */
export const EXPORT_HELP =
  `Usage: ./rft export (--onnx OUT.onnx | --transformers-js OUT_DIR) --model DIR [options]

--onnx writes the model as an ONNX graph (opset 17): inputs input_ids and attention_mask (int64
[batch, seq]), output logits (float [batch, seq, vocab]), weights as initializers.
--transformers-js writes a directory transformers.js generates from: config.json,
onnx/model.onnx (KV-cached: position_ids, past_key_values.* in, present.* out), tokenizer.json,
tokenizer_config.json (a char tokenizer is converted), generation_config.json.

Options:
  --onnx FILE              the ONNX file to write
  --transformers-js DIR    the transformers.js model directory to write
  --model DIR              Hugging Face model directory, checkpoint (checkpoints/step_N), or a
                           stage or run directory (its latest checkpoint; of a run of several
                           stages, the stage written last)
  --adapter DIR            a PEFT LoRA adapter merged into the model first (default:
                           the model directory's own, as a LoRA run's checkpoints hold)
  --no-attention-mask      only input_ids (every sequence unpadded; --onnx only)
  --external-data          weights in a data file beside the model (default: only past 2 GiB;
                           FILE.data, or onnx/model.onnx_data for transformers.js)
  --fp16                   float16 weights (cast to float32 in the graph): with --onnx, in FILE;
                           with --transformers-js, also onnx/model_fp16.onnx (dtype "fp16")`;

/** Prints what an ONNX export wrote. */
function reportOnnx(result: OnnxExportResult, from: string): void {
  const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  console.log(
    `wrote ${result.path} (${
      mb(result.modelBytes)
    }, ${result.nodes} nodes, ${result.initializers} initializers) from ${from}`,
  );
  if (result.dataPath) console.log(`wrote ${result.dataPath} (${mb(result.dataBytes)})`);
}

/** Runs `rft export`; returns the exit code. */
export async function exportCommand(args: string[]): Promise<number> {
  const parsed = parseFlags({
    args,
    options: {
      help: { type: "boolean", short: "h" },
      onnx: { type: "string" },
      "transformers-js": { type: "string" },
      model: { type: "string" },
      adapter: { type: "string" },
      "no-attention-mask": { type: "boolean" },
      "external-data": { type: "boolean" },
      fp16: { type: "boolean" },
    },
  }, "export");
  const { values } = parsed;
  if (values.help) {
    console.log(EXPORT_HELP);
    return 0;
  }
  const tjsDir = values["transformers-js"];
  if (!values.onnx === !tjsDir) {
    throw new CliError(
      "exactly one of --onnx FILE or --transformers-js DIR is required (./rft export --help)",
    );
  }
  if (!values.model) throw new CliError("--model DIR is required (./rft export --help)");
  if (tjsDir && values["no-attention-mask"]) {
    throw new CliError(
      "--no-attention-mask applies to --onnx only: transformers.js feeds an attention_mask",
    );
  }
  if (tjsDir) await checkOutputDirectory("--transformers-js", tjsDir);
  else await checkOutputFile("--onnx", values.onnx!);
  const { model, dir } = await loadCliModel(values.model, values.adapter, {
    needsTokenizer: tjsDir !== undefined,
  });
  const externalData: boolean | "auto" = values["external-data"] ? true : "auto";
  using _exporting = beginActivity(`exporting ${dir} to ${tjsDir ?? values.onnx}`);
  try {
    if (tjsDir) {
      const options = { externalData, fp16: values.fp16 };
      const result = await exportTransformersJs(model, tjsDir, options).catch((err) => {
        throw err instanceof Error && err.message.startsWith("Cannot export for transformers.js")
          ? new CliError(err.message)
          : err;
      });
      for (const onnx of result.onnx) reportOnnx(onnx, dir);
      console.log(`wrote ${result.files.map((f) => `${tjsDir}/${f}`).join(", ")}`);
    } else {
      const result = await exportOnnx(model, values.onnx!, {
        attentionMask: !values["no-attention-mask"],
        externalData,
        float16Weights: values.fp16,
      });
      reportOnnx(result, dir);
    }
  } finally {
    model.destroy();
  }
  return 0;
}
