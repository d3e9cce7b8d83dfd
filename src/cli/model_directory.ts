/**
 * The model directory a `--model DIR` flag names: a Hugging Face model directory or a checkpoint
 * (`checkpoints/step_N/`, it has `config.json`) as it is; a stage directory or a one-stage run
 * directory (it has `checkpoints/`): its latest checkpoint; a run of several stages (one
 * subdirectory each): the latest checkpoint of the stage written last. `generate`, `serve` and
 * `export` read their `--model` through it.
 */

import { loadModel, type PolicyModel } from "../model/policy.ts";
import { findLatestCheckpoint } from "../trainer/checkpoint.ts";
import { beginActivity } from "../util/activity.ts";
import { oneLineMessage } from "../util/input_error.ts";
import { CliError } from "./cli_error.ts";

/** The model directory `dir` names (see the file comment); a CliError when it names none. */
export async function modelDirectory(dir: string): Promise<string> {
  let stat: Deno.FileInfo;
  try {
    stat = await Deno.stat(dir);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      throw new CliError(`--model ${dir}: no such file or directory`);
    }
    throw new CliError(`--model ${dir}: ${(err as Error).message}`);
  }
  if (!stat.isDirectory) {
    throw new CliError(`--model ${dir}: expected a directory, found a file`);
  }
  if (await isFile(`${dir}/config.json`)) {
    const weights = ["model.safetensors", "model.safetensors.index.json"];
    if (await anyFile(dir, weights)) return dir;
    throw new CliError(
      `--model ${dir}: expected weights (${
        weights.join(" or ")
      }) beside config.json, found none (a model a run creates from scratch has none: give the run's directory or a checkpoint)`,
    );
  }
  const latest = await findLatestCheckpoint(dir) ?? await latestStageCheckpoint(dir);
  if (!latest) {
    throw new CliError(
      `--model ${dir}: expected a model directory (config.json), a checkpoint, or a stage or run directory with checkpoints; found none of these`,
    );
  }
  return latest;
}

/** The latest checkpoint of the subdirectory (stage) of `dir` whose one was written last. */
async function latestStageCheckpoint(dir: string): Promise<string | undefined> {
  let best: { path: string; written: number } | undefined;
  for await (const entry of Deno.readDir(dir)) {
    if (!entry.isDirectory) continue;
    const path = await findLatestCheckpoint(`${dir}/${entry.name}`);
    if (!path) continue;
    const written = (await Deno.stat(path)).mtime?.getTime() ?? 0;
    if (!best || written > best.written) best = { path, written };
  }
  return best?.path;
}

/** Whether directory `dir` holds one of the files `names`. */
async function anyFile(dir: string, names: readonly string[]): Promise<boolean> {
  for (const name of names) if (await isFile(`${dir}/${name}`)) return true;
  return false;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}

/**
 * Loads the model `--model DIR` names (with `--adapter` merged when given), as an activity the
 * heartbeat can name; a model that cannot be loaded is a one-line CliError (exit 2), and so is
 * one without a tokenizer when `needsTokenizer` (checked before anything is loaded).
 */
export async function loadCliModel(
  dir: string,
  adapterDir?: string,
  { needsTokenizer = false } = {},
): Promise<{ model: PolicyModel; dir: string }> {
  const resolved = await modelDirectory(dir);
  const tokenizers = ["tokenizer.json", "char_tokenizer.json"];
  if (needsTokenizer && !(await anyFile(resolved, tokenizers))) {
    throw new CliError(
      `--model ${dir}: expected a tokenizer (${
        tokenizers.join(" or ")
      }) in ${resolved}, found none`,
    );
  }
  using _loading = beginActivity(`loading the model from ${resolved}`);
  try {
    return { model: await loadModel(resolved, { adapterDir }), dir: resolved };
  } catch (err) {
    throw new CliError(oneLineMessage(err));
  }
}
