/**
 * The data files a Hub dataset's README.md names: the `configs:` list of its YAML front matter
 * (`config_name`, `data_files` as a path, a list of paths, a list of `{split, path}` or a
 * mapping of split to paths; paths may hold `*` and `**` globs), as `datasets.load_dataset`
 * reads it. A dataset folder whose README names its files is read through them; others are
 * found by their layout (`dataset_files.ts`).
 */

import { join, relative } from "node:path";
import { parse } from "yaml";
import { InputError } from "../util/input_error.ts";

/** One `configs:` entry: its name and its files by split. */
interface ReadmeConfig {
  name: string;
  splits: Map<string, string[]>;
}

/** The `configs:` of `dir`'s README.md front matter; undefined when it names none. */
async function readmeConfigs(dir: string): Promise<ReadmeConfig[] | undefined> {
  const text = await Deno.readTextFile(join(dir, "README.md")).catch(() => undefined);
  const match = text === undefined ? null : /^---\r?\n([\s\S]*?)\r?\n---/.exec(text);
  if (!match) return undefined;
  let meta: unknown;
  try {
    meta = parse(match[1]);
  } catch {
    return undefined;
  }
  const configs = (meta as { configs?: unknown } | null)?.configs;
  if (!Array.isArray(configs)) return undefined;
  return configs.map((c) => ({
    name: String(c?.config_name ?? "default"),
    splits: splitsOf(c?.data_files),
  }));
}

/** `data_files` in any of its forms, as paths (globs) by split. */
function splitsOf(dataFiles: unknown): Map<string, string[]> {
  const paths = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : [String(v)]);
  const splits = new Map<string, string[]>();
  const add = (split: string, v: unknown) =>
    splits.set(split, [...(splits.get(split) ?? []), ...paths(v)]);
  if (typeof dataFiles === "string") add("train", dataFiles);
  else if (Array.isArray(dataFiles)) {
    for (const item of dataFiles) {
      if (typeof item === "string") add("train", item);
      else if (item && typeof item === "object") add(String(item.split ?? "train"), item.path);
    }
  } else if (dataFiles && typeof dataFiles === "object") {
    for (const [split, v] of Object.entries(dataFiles)) add(split, v);
  }
  return splits;
}

/** A glob (`*` within a folder, `**` across folders) as a regular expression of a path. */
function globPattern(glob: string): RegExp {
  const escaped = glob.replace(/^\.\//, "").replace(/[.+^${}()|[\]\\]/g, "\\$&");
  const pattern = escaped.replace(
    /\*\*\/?|\*|\?/g,
    (g) => g.startsWith("**") ? "(?:.*/)?" : g === "*" ? "[^/]*" : "[^/]",
  );
  return new RegExp(`^${pattern}$`);
}

/** Every file under `dir`, as paths relative to it. */
async function filesUnder(dir: string, root = dir): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory && !entry.name.startsWith(".")) {
      found.push(...await filesUnder(path, root));
    } else if (entry.isFile) found.push(relative(root, path));
  }
  return found;
}

/**
 * The files of `split` of config `subset` (else `default`, else the only one) that `dir`'s
 * README names, sorted; undefined when its README names no files. Throws an InputError naming
 * the configs and splits it has when the one asked for is not among them.
 */
export async function readmeDataFiles(
  dir: string,
  split: string,
  subset?: string,
): Promise<string[] | undefined> {
  const configs = await readmeConfigs(dir);
  if (!configs || configs.length === 0) return undefined;
  const fail = (detail: string): never => {
    throw new InputError(`Cannot open dataset ${dir}: ${detail}`);
  };
  const config = configs.find((c) => c.name === (subset ?? "default")) ??
    (subset === undefined && configs.length === 1 ? configs[0] : undefined);
  if (!config) {
    return fail(
      `its README.md names configs ${configs.map((c) => c.name).join(", ")}; expected ${
        subset === undefined ? "one named default" : `"${subset}"`
      } (subset_name)`,
    );
  }
  const globs = config.splits.get(split);
  if (!globs) {
    return fail(
      `its README.md names splits ${[...config.splits.keys()].join(", ")} of config ` +
        `"${config.name}"; expected "${split}" (split)`,
    );
  }
  const all = await filesUnder(dir);
  const matched = all.filter((f) => globs.some((g) => globPattern(g).test(f)));
  if (matched.length === 0) {
    fail(`its README.md names ${globs.join(", ")} for split "${split}"; no such file`);
  }
  return matched.sort().map((f) => join(dir, f));
}
