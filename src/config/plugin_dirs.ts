/**
 * The plugin directories a config names (`plugin_dirs`, at the top or in a stage), read before
 * the config is loaded: plugins register the workflows and reward fns the config's checks look
 * up, so they have to be imported first. Paths are resolved against the config file's
 * directory. Anything malformed is left to `loadConfig`, which reports it in one line.
 */

import { parse } from "yaml";
import { dirname, resolve } from "node:path";

/** Absolute plugin directories named by the YAML config `file`; [] when it names none. */
export async function configPluginDirs(file: string): Promise<string[]> {
  let root: unknown;
  try {
    root = parse(await Deno.readTextFile(file));
  } catch {
    return [];
  }
  const configDir = dirname(resolve(file));
  const named = [root, ...stageEntries(root)].flatMap((node) => stringList(field(node)));
  return [...new Set(named.map((dir) => resolve(configDir, dir)))];
}

function stageEntries(root: unknown): unknown[] {
  const stages = isMapping(root) ? root.stages : undefined;
  return Array.isArray(stages) ? stages : [];
}

function field(node: unknown): unknown {
  return isMapping(node) ? node.plugin_dirs : undefined;
}

function stringList(value: unknown): string[] {
  if (typeof value === "string") return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

function isMapping(node: unknown): node is Record<string, unknown> {
  return typeof node === "object" && node !== null && !Array.isArray(node);
}
