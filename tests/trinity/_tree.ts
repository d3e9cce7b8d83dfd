/**
 * A Trinity-like tree for the acceptance tests, as a user has it after cloning Trinity-RFT and
 * preparing the examples' data: `examples/` (the configs of tests/trinity/configs/v0.5.2, as
 * they are), `later/` (those of later releases), `countdown_dataset/oneshot-split/` (what the countdown examples read, relative to
 * the tree's root), and beside it the tiny model, the local datasets and a Hub cache holding the
 * Hub datasets and models the examples name by id (the models are the tiny one). Writes files
 * only under the directory it is given.
 */

import {
  hubSnapshot,
  type LocalDatasets,
  writeCountdown,
  writeHubDatasets,
  writeLocalDatasets,
  writeToolace,
} from "./_datasets.ts";
import { writeTinyQwen } from "./_tiny_qwen.ts";

/** The Hub ids of the models the examples name without an environment variable. */
const HUB_MODELS = [
  "Qwen/Qwen2.5-32B-Instruct",
  "Qwen/Qwen3-30B-A3B-Instruct-2507",
  "Qwen/Qwen2.5-1.5B-Instruct",
];

/** Where the tree and its fixtures are. */
export interface TrinityTree {
  /** The tree's root: runs start here. */
  root: string;
  model: string;
  data: LocalDatasets;
  /** The environment every run gets (model, SFT data, Hub cache). */
  env: Record<string, string>;
}

/** The examples folder of the corpus. */
export const EXAMPLES = new URL("./configs/v0.5.2/examples", import.meta.url).pathname;

/** The configs of later releases (flat). */
export const LATER = new URL("./configs/later", import.meta.url).pathname;

/** Copies the files under `from` to `to` (created), folders and all. */
async function copyTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    const [source, target] = [`${from}/${entry.name}`, `${to}/${entry.name}`];
    if (entry.isDirectory) await copyTree(source, target);
    else await Deno.copyFile(source, target);
  }
}

/** Writes the tree and its fixtures under `dir`. */
export async function writeTrinityTree(dir: string): Promise<TrinityTree> {
  const root = `${dir}/Trinity-RFT`;
  await Deno.mkdir(root, { recursive: true });
  await copyTree(EXAMPLES, `${root}/examples`);
  await copyTree(LATER, `${root}/later`);
  await writeCountdown(`${root}/countdown_dataset/oneshot-split`);
  await writeToolace(`${root}/examples/grpo_toolcall/toolace_data`);
  const model = `${dir}/model`;
  await writeTinyQwen(model);
  const data = await writeLocalDatasets(`${dir}/data`);
  const hub = `${dir}/hub`;
  await writeHubDatasets(hub);
  for (const id of HUB_MODELS) {
    const snapshot = await hubSnapshot(hub, "models", id);
    await Deno.mkdir(snapshot.slice(0, snapshot.lastIndexOf("/")), { recursive: true });
    await Deno.symlink(model, snapshot);
  }
  return {
    root,
    model,
    data,
    env: { TRINITY_MODEL_PATH: model, TRINITY_SFT_DATASET_PATH: data.sft, HF_HUB_CACHE: hub },
  };
}
