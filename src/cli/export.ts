/**
 * `rft export --onnx OUT.onnx --model DIR`: writes a model as a standard ONNX graph (see
 * `src/export/export_onnx.ts`). DIR is a Hugging Face model directory, a checkpoint directory,
 * or a run directory (its latest checkpoint). ONNX is the only export format so far.
 */

import { exportOnnx } from "../export/export_onnx.ts";
import { loadModel } from "../model/policy.ts";
import { findLatestCheckpoint } from "../trainer/checkpoint.ts";
import { CliError } from "./cli_error.ts";
import { parseFlags } from "./parse_flags.ts";

const HELP = `Usage: ./rft export --onnx OUT.onnx --model DIR [options]

Writes the model as an ONNX graph (opset 17): inputs input_ids and attention_mask (int64
[batch, seq]), output logits (float [batch, seq, vocab]), weights as initializers.

Options:
  --onnx FILE            the ONNX file to write
  --model DIR            Hugging Face model directory, checkpoint directory (step_N), or run
                         directory (its latest checkpoint)
  --no-attention-mask    only input_ids (every sequence unpadded)
  --external-data        weights in FILE.data beside the model (default: only past 2 GiB)`;

/** The model directory `dir` names: itself when it has config.json, else its latest checkpoint. */
async function modelDirectory(dir: string): Promise<string> {
  try {
    await Deno.stat(`${dir}/config.json`);
    return dir;
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  const latest = await findLatestCheckpoint(dir);
  if (!latest) {
    throw new CliError(
      `Cannot export ${dir}: expected a model directory (config.json) or a run directory with checkpoints, found neither`,
    );
  }
  return latest;
}

/** Runs `rft export`; returns the exit code. */
export async function exportCommand(args: string[]): Promise<number> {
  const parsed = parseFlags({
    args,
    options: {
      help: { type: "boolean", short: "h" },
      onnx: { type: "string" },
      model: { type: "string" },
      "no-attention-mask": { type: "boolean" },
      "external-data": { type: "boolean" },
    },
  }, HELP);
  const { values } = parsed;
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  if (!values.onnx) throw new CliError(`--onnx FILE is required\n${HELP}`);
  if (!values.model) throw new CliError(`--model DIR is required\n${HELP}`);
  const dir = await modelDirectory(values.model);
  let model;
  try {
    model = await loadModel(dir);
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  try {
    const result = await exportOnnx(model, values.onnx, {
      attentionMask: !values["no-attention-mask"],
      externalData: values["external-data"] ? true : "auto",
    });
    const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
    console.log(
      `wrote ${result.path} (${
        mb(result.modelBytes)
      }, ${result.nodes} nodes, ${result.initializers} initializers) from ${dir}`,
    );
    if (result.dataPath) console.log(`wrote ${result.dataPath} (${mb(result.dataBytes)})`);
  } finally {
    model.destroy();
  }
  return 0;
}
