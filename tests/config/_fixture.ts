/** Shared fixtures of the config tests: a temp dir with a model directory and data files. */

import { ConfigError } from "../../src/config/config_error.ts";
import { loadConfig, type LoadConfigOptions } from "../../src/config/load_config.ts";

/** The first lines of a valid config (6 lines); tests append to it. */
export const BASE = `model:
  model_path: model
buffer:
  explorer_input:
    taskset:
      path: data/train.jsonl
`;

/**
 * Runs `fn` in a fresh temp dir holding `model/config.json`, `empty_model/` (no config.json)
 * and `data/{train,eval,sft}.jsonl`; removes it afterwards.
 */
export async function withFixture(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "rft-config-" });
  try {
    await Deno.mkdir(`${dir}/model`);
    await Deno.mkdir(`${dir}/empty_model`);
    await Deno.mkdir(`${dir}/data`);
    await Deno.writeTextFile(`${dir}/model/config.json`, "{}");
    for (const name of ["train", "eval", "sft"]) {
      await Deno.writeTextFile(`${dir}/data/${name}.jsonl`, `{"prompt":"1+1=","response":"2"}\n`);
    }
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Writes `text` to `<dir>/<name>` and returns the path. */
export async function writeConfig(
  dir: string,
  text: string,
  name = "config.yaml",
): Promise<string> {
  const path = `${dir}/${name}`;
  await Deno.writeTextFile(path, text);
  return path;
}

/** The message of the ConfigError that loading `text` throws (fails if it loads or throws else). */
export async function loadError(
  dir: string,
  text: string,
  options: LoadConfigOptions = {},
): Promise<string> {
  const path = await writeConfig(dir, text);
  try {
    await loadConfig(path, { env: {}, ...options });
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error(`Expected ${path} to fail to load:\n${text}`);
}
