/**
 * Reads a Hugging Face `config.json` into the normalised {@link ModelConfig} rft builds from, once,
 * at load: the family table (`families.ts`) picks the row of its `model_type` and fills the
 * defaults transformers uses for it. Keys rft does not use are ignored; keys whose values rft
 * cannot run (an unknown model_type, RoPE variant or activation) are one InputError naming the
 * file, the key and what is supported.
 */

import { InputError } from "../util/input_error.ts";
import { describeModel } from "./families.ts";
import type { ModelConfig } from "./model_config.ts";

export type { ModelConfig } from "./model_config.ts";

/** Reads and validates `<dir>/config.json`. */
export async function readHfConfig(dir: string): Promise<ModelConfig> {
  const path = `${dir}/config.json`;
  let json: unknown;
  try {
    json = JSON.parse(await Deno.readTextFile(path));
  } catch (err) {
    throw new InputError(`Cannot read ${path}: ${(err as Error).message}`);
  }
  return parseHfConfig(json, path);
}

/** Validates parsed config JSON; `file` names the source in error messages. */
export function parseHfConfig(json: unknown, file = "config.json"): ModelConfig {
  return describeModel(json, file);
}
