/**
 * Where Trinity-RFT keeps an SFT / DPO stage's dataset: `buffer.trainer_input.experience_buffer`
 * (path, split, subset_name, format), where rft reads `buffer.trainer_input.sft_warmup_dataset`.
 * In a stage whose algorithm trains on a dataset (sft, dpo) the first is read as the second,
 * unless the second is written, with Trinity's default `prompt_type: messages`. Works on one
 * stage's merged tree; copies what it changes.
 */

import { ALGORITHM_TYPE } from "../algorithm/algorithm_type.ts";
import type { ConfigNode } from "./config_tree.ts";

/** The keys of an experience buffer that describe a dataset. */
const DATASET_KEYS = ["path", "split", "subset_name", "format"];

/** `tree` with its experience buffer read as the SFT / DPO dataset where that applies. */
export function moveSftExperienceBuffer<T extends { tree: ConfigNode }>(stage: T): T {
  const { tree } = stage;
  const algorithmNode = at(tree, ["algorithm", "algorithm_type"]);
  const algorithm = algorithmNode?.kind === "scalar" ? algorithmNode.value : "grpo";
  if (typeof algorithm !== "string" || !ALGORITHM_TYPE.names().includes(algorithm)) return stage;
  if (ALGORITHM_TYPE.get(algorithm).schema === "experience") return stage;
  const input = at(tree, ["buffer", "trainer_input"]);
  const buffer = at(tree, ["buffer", "trainer_input", "experience_buffer"]);
  if (input?.kind !== "map" || buffer?.kind !== "map" || !buffer.entries.has("path")) return stage;
  if (input.entries.get("sft_warmup_dataset")?.kind === "map") return stage;
  const dataset = new Map<string, ConfigNode>();
  const rest = new Map(buffer.entries);
  for (const key of DATASET_KEYS) {
    const node = buffer.entries.get(key);
    if (node === undefined) continue;
    dataset.set(key, node);
    rest.delete(key);
  }
  // Trinity's FormatConfig reads chats unless told otherwise.
  const format = dataset.get("format");
  const formatEntries = new Map(format?.kind === "map" ? format.entries : []);
  if (!formatEntries.has("prompt_type")) {
    const origin = format?.origin ?? buffer.origin;
    formatEntries.set("prompt_type", { kind: "scalar", value: "messages", plain: true, origin });
    dataset.set("format", { kind: "map", entries: formatEntries, origin });
  }
  const entries = new Map(input.entries);
  entries.set("experience_buffer", { ...buffer, entries: rest });
  entries.set("sft_warmup_dataset", { kind: "map", entries: dataset, origin: buffer.origin });
  return { ...stage, tree: replaced(tree, ["buffer", "trainer_input"], { ...input, entries }) };
}

/** The node at `keys` under `node`, if any. */
function at(node: ConfigNode | undefined, keys: readonly string[]): ConfigNode | undefined {
  for (const key of keys) node = node?.kind === "map" ? node.entries.get(key) : undefined;
  return node;
}

/** `node` with the node at `keys` (which exists) replaced by `value`, copying the maps on the way. */
function replaced(node: ConfigNode, keys: readonly string[], value: ConfigNode): ConfigNode {
  if (keys.length === 0) return value;
  const map = node as ConfigNode & { kind: "map" };
  const entries = new Map(map.entries);
  entries.set(keys[0], replaced(map.entries.get(keys[0])!, keys.slice(1), value));
  return { ...map, entries };
}
